export * from './fields.js';
export * from './prescription.js';
export * from './identity.js';
export * from './subscription.js';
export * from './event.js';
export * from './error-bodies.js';
export * from './versions.js';
