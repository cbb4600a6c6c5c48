/**
 * The client's types, generated from the service's own OpenAPI document with openapi-typescript:
 * the text of lib/client/schema.ts. `npm run client:types` writes it, and the build, `npm ci` and
 * lint run it first: the file is not committed, so the client never lags behind the document.
 */
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript'
import { openApiDocument } from '../lib/openapi/document.js'

/** Where the generated types live, from the project root. */
export const SCHEMA_FILE = 'lib/client/schema.ts'

const HEADER = `/**
 * Generated from the service's OpenAPI document (lib/openapi/) by openapi-typescript: do not edit.
 * \`npm run client:types\` (and so the build and lint) writes it; it is not committed.
 */

`

/** The text of schema.ts for `document` (default: the service's; a test passes one changed on purpose). */
export async function clientSchema(document: unknown = serviceDocument()): Promise<string> {
  const ast = await openapiTS(document as OpenAPI3, { silent: true })
  return HEADER + astToString(ast)
}

/** The service's OpenAPI document; the server's URL is no part of the types. */
export const serviceDocument = (): Record<string, unknown> => openApiDocument({ publicUrl: 'https://status.example.net' })
