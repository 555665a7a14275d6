// The CLI's administration is the use cases' (usecases/administration.ts); re-exported for the CLI and tests.
export * from '../usecases/administration.js';
