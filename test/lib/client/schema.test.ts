import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { clientSchema, SCHEMA_FILE } from '../../../scripts/client-schema.js'
import { ROOT } from '../../helpers/compiled.js'

// The client's types are generated from the document the service serves: a route, parameter or
// field changed in lib/openapi/ without `npm run client:types` would leave the client behind.
t.test('the committed client types are what the generator makes of the OpenAPI document now', async (t) => {
  const committed = readFileSync(join(ROOT, SCHEMA_FILE), 'utf8')
  const generated = await clientSchema()
  t.ok(committed === generated, `${SCHEMA_FILE} is current (run \`npm run client:types\` when it is not)`)
  t.match(committed, /^\/\*\*\n \* Generated from the service's OpenAPI document .*\n \* Regenerate with `npm run client:types`/)
})

t.test('every operation of the document has its client method, named by its operationId', async (t) => {
  const { SiteStatusClient } = await import('../../../lib/client/index.js')
  const { openApiDocument } = await import('../../../lib/openapi/document.js')
  const paths = openApiDocument({ publicUrl: 'https://status.example.net' }).paths as Record<
    string,
    Record<string, { operationId: string }>
  >
  const operationIds = Object.values(paths).flatMap((item) => Object.values(item).map((op) => op.operationId))
  const methods = Object.getOwnPropertyNames(SiteStatusClient.prototype)
  t.same(
    operationIds.filter((id) => !methods.includes(id)),
    [],
    'no operation without its method'
  )
})
