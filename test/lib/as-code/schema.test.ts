import { readFileSync } from 'node:fs'
import t from 'tap'
import { configJsonSchema } from '../../../lib/as-code/schema.js'

t.test('the JSON Schema in the package is the one the Joi rules make (npm run config:schema)', async (t) => {
  const shipped: unknown = JSON.parse(readFileSync('schemas/site-status.schema.json', 'utf8'))
  t.same(shipped, configJsonSchema('https://site-status.invalid'))
})
