/**
 * `troupe/mongodb`: the MongoDB store (driver 7), production storage shared by several processes.
 * @packageDocumentation
 */
export { MONGO_COLLECTIONS } from './mongoContext.js';
export { type MongoStoreOptions, openMongoStore } from './mongoStore.js';
