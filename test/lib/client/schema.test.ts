import t from 'tap'

t.test('every operation of the document has its client method, named by its operationId', async (t) => {
  const { SiteStatusClient } = await import('../../../lib/client/index.js')
  const { openApiDocument } = await import('../../../lib/openapi/document.js')
  const paths = openApiDocument({ publicUrl: 'https://status.example.net' }).paths as Record<
    string,
    Record<string, { operationId: string }>
  >
  const operationIds = Object.values(paths).flatMap((item) => Object.values(item).map((op) => op.operationId))
  const methods: string[] = []
  for (let proto: unknown = SiteStatusClient.prototype; proto !== Object.prototype; proto = Object.getPrototypeOf(proto))
    methods.push(...Object.getOwnPropertyNames(proto))
  t.same(
    operationIds.filter((id) => !methods.includes(id)),
    [],
    'no operation without its method'
  )
})
