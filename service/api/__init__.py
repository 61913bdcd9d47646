"""The HTTP edge: routes, schemas, the OpenAPI document, rate limits and the followers of live games."""
