/**
 * The HTTP methods an endpoint may take: those the toolkit accepts (python/apipod/app.py,
 * `HTTP_METHODS`, the same list), all of which the gateway's router serves.
 */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE'] as const;
