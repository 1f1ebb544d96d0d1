/**
 * Exit codes: 0 ok, 1 unexpected failure or usage error, 2 bad scenario or bad configuration,
 * 74 the store's disk is full (EXIT_STORE_FULL in storeErrors.ts), 75 the store is held by another process
 * (EXIT_STORE_BUSY).
 */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_BAD_INPUT = 2;
