import type { Test } from 'tap'
import type { ServerInjectResponse } from '@hapi/hapi'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { openApiDocument } from '../../lib/openapi/document.js'

type Json = Record<string, any>

/** The document as the service serves it (the server URL does not matter to validation). */
export const document = openApiDocument({ publicUrl: 'https://status.example.net' }) as Json

const DOC_ID = 'urn:site-status:openapi'
// ajv-formats is CommonJS; under NodeNext its default export arrives as the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => unknown
export const ajv = new Ajv2020({ strict: true, allErrors: true })
addFormats(ajv)
// The document's own top-level fields are not JSON Schema keywords; declaring them lets strict mode
// stay on for the schemas inside, so a misspelt keyword there fails.
for (const keyword of Object.keys(document)) ajv.addKeyword({ keyword })
ajv.addSchema(document, DOC_ID)
const validators = new Map<string, ValidateFunction>()

const escape = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1')

/** A validator for the schema at a JSON pointer in the document; its `$ref`s resolve inside the document. */
export function schemaAt(pointer: string): ValidateFunction {
  let validate = validators.get(pointer)
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOC_ID}#${pointer}` })
    validators.set(pointer, validate)
  }
  return validate
}

/** Follows a `$ref` inside the document; returns the object and where it lives. */
function resolve(node: Json, pointer: string): { node: Json; pointer: string } {
  if (typeof node.$ref !== 'string') return { node, pointer }
  const target = node.$ref.slice(1)
  const found = target
    .split('/')
    .slice(1)
    .reduce<Json>((n, s) => n[s.replace(/~1/g, '/').replace(/~0/g, '~')], document)
  return resolve(found, target)
}

function templateRegExp(template: string): RegExp {
  return new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`)
}

/** The documented path a request was for: hapi's route template, or for the catch-all, the template the path matches. */
function documentedPath(res: ServerInjectResponse): string | undefined {
  const route = res.request.route.path
  if (document.paths[route]) return route
  return Object.keys(document.paths).find((p) => templateRegExp(p).test(res.request.path))
}

function checkHeaders(headers: Json, res: ServerInjectResponse, pointer: string, problems: string[]): void {
  for (const [name, raw] of Object.entries(headers)) {
    const { node: header, pointer: at } = resolve(raw as Json, `${pointer}/${escape(name)}`)
    const value = res.headers[name.toLowerCase()]
    if (value === undefined) {
      if (header.required) problems.push(`header ${name} is required but missing`)
      continue
    }
    const schema = resolve(header.schema, `${at}/schema`)
    const typed = schema.node.type === 'integer' ? Number(value) : value
    const validate = schemaAt(schema.pointer)
    if (!validate(typed)) problems.push(`header ${name}: ${ajv.errorsText(validate.errors)}`)
  }
}

/**
 * What is wrong with a real response by the document: its status must be documented for the
 * method and path, required headers present and valid, the content type documented, and a JSON
 * body valid against the schema. An empty list means it matches.
 */
export function openApiProblems(res: ServerInjectResponse): string[] {
  const problems: string[] = []
  const method = res.request.method === 'head' ? 'get' : res.request.method
  const path = documentedPath(res)
  let responses: Json
  let pointer: string
  if (path === undefined) {
    // Unknown routes are not in the document; their 404 must still be the documented error.
    if (res.statusCode !== 404) return [`${res.request.path} is not documented`]
    responses = { 404: { $ref: '#/components/responses/NotFound' } }
    pointer = ''
  } else if (!document.paths[path][method]) {
    if (res.statusCode !== 405) return [`${method.toUpperCase()} ${path} is not documented`]
    responses = { 405: { $ref: '#/components/responses/MethodNotAllowed' } }
    pointer = ''
  } else {
    responses = document.paths[path][method].responses
    pointer = `/paths/${escape(path)}/${method}/responses`
  }
  const entry = responses[String(res.statusCode)]
  if (!entry) return [`status ${res.statusCode} is not documented for ${method.toUpperCase()} ${path ?? res.request.path}`]
  const { node: response, pointer: at } = resolve(entry, `${pointer}/${res.statusCode}`)
  if (response.headers) checkHeaders(response.headers, res, `${at}/headers`, problems)
  const noBody = res.statusCode === 304 || res.request.method === 'head'
  if (!response.content || noBody) {
    if (res.payload !== '') problems.push('a body where the document says there is none')
    return problems
  }
  const type =
    String(res.headers['content-type'] ?? '')
      .split(';')[0]
      ?.trim() ?? ''
  if (!response.content[type]) return [...problems, `content type ${type} is not documented (${Object.keys(response.content).join(', ')})`]
  if (type === 'application/json') {
    const validate = schemaAt(`${at}/content/${escape(type)}/schema`)
    if (!validate(JSON.parse(res.payload))) problems.push(`body: ${ajv.errorsText(validate.errors)}`)
  }
  // NDJSON: the schema is each line's, and the body ends with a newline.
  if (type === 'application/x-ndjson') {
    const validate = schemaAt(`${at}/content/${escape(type)}/schema`)
    if (!res.payload.endsWith('\n')) problems.push('an NDJSON body must end with a newline')
    for (const [i, line] of res.payload.split('\n').slice(0, -1).entries()) {
      if (!validate(JSON.parse(line))) problems.push(`line ${i + 1}: ${ajv.errorsText(validate.errors)}`)
    }
  }
  return problems
}

/** Asserts that a real response matches the OpenAPI document. */
export function matchesOpenApi(t: Test, res: ServerInjectResponse, what?: string): void {
  t.same(
    openApiProblems(res),
    [],
    `${what ?? `${res.request.method.toUpperCase()} ${res.request.path} ${res.statusCode}`} matches the OpenAPI document`
  )
}
