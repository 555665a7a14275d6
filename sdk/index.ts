// One import for the whole SDK: `import { GatewayClient, verifyNotification } from './sdk/index.js'`.
export * from './client.js';
export * from './signing.js';
