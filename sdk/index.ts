// The package's entry point: `import { GatewayClient, verifyWebhook } from '@payment-gateway/merchant-sdk'`.
export * from './client.js';
export * from './signing.js';
