// Validates an OpenAPI document with @apidevtools/swagger-parser (structure against the
// OpenAPI 3.1 schema, every $ref resolvable), then checks what that validator leaves to us:
// every operation documents a default response, and every GET a 200. Exit status 0 when
// valid. Usage: node validate.mjs FILE
import SwaggerParser from "@apidevtools/swagger-parser";

const file = process.argv[2];
try {
  const api = await SwaggerParser.validate(file);
  let operations = 0;
  for (const [path, item] of Object.entries(api.paths)) {
    for (const method of ["get", "put", "post", "delete", "options", "head", "patch", "trace"]) {
      const op = item[method];
      if (!op) continue;
      operations++;
      for (const status of method === "get" ? ["200", "default"] : ["default"]) {
        if (!op.responses[status]) throw new Error(`${method.toUpperCase()} ${path}: no ${status} response`);
      }
    }
  }
  console.log(`openapi: ${file} is a valid OpenAPI ${api.openapi} document, ${operations} operations`);
} catch (err) {
  console.error(`openapi: ${file}: ${err.message}`);
  process.exit(1);
}
