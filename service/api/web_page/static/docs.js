// The API reference page: Swagger UI over this app's own /openapi.json, with no outside validator.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#reference",
  validatorUrl: null,
  deepLinking: true,
});
