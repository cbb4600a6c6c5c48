// Writes lib/client/schema.ts from the OpenAPI document (`npm run client:types`).
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { clientSchema, SCHEMA_FILE } from './client-schema.js'

const root = fileURLToPath(new URL('../', import.meta.url))
writeFileSync(join(root, SCHEMA_FILE), await clientSchema())
console.log(`wrote ${SCHEMA_FILE}`)
