// What the use cases need of a logger: pino's methods, structured fields first. The gateway
// passes pino (through Fastify); tests pass a stand-in.
export interface Log {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}
