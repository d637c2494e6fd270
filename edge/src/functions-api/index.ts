export { apiError } from './api-error.ts';
export { createFunctionsApi, FUNCTIONS_PATH, type FunctionsApiOptions, TENANT_HEADER } from './functions-router.ts';
