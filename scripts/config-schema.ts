import { writeFileSync } from 'node:fs'
import { configJsonSchema } from '../lib/as-code/schema.js'

// The configuration file's JSON Schema, shipped in the package for editors without a running
// service; test/lib/as-code/schema.test.ts fails when it no longer matches the Joi rules.
const PATH = 'schemas/site-status.schema.json'
writeFileSync(PATH, JSON.stringify(configJsonSchema('https://site-status.invalid'), null, 2) + '\n')
console.log(`wrote ${PATH}`)
