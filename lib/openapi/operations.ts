import type { Scope } from '../rules/scopes.js'
import { budgetHeaders } from './components.js'
import { ref, type Json } from './parts.js'

/* The pieces every operation of the document is made of: its content, errors and security. */

export const json = (schema: Json): Json => ({ 'application/json': { schema } })
export const errors = (...names: string[]): Json =>
  Object.fromEntries(
    names.map((name) => {
      const status = {
        BadRequest: 400,
        Unauthorized: 401,
        Forbidden: 403,
        NotFound: 404,
        Conflict: 409,
        MethodNotAllowed: 405,
        PayloadTooLarge: 413,
        UnsupportedMediaType: 415,
        TooManyRequests: 429,
        InternalError: 500,
        ServiceUnavailable: 503
      }[name]
      return [String(status), ref('responses', name)]
    })
  )
export const keyedErrors = (...extra: string[]): Json =>
  errors(...extra, 'Unauthorized', 'MethodNotAllowed', 'TooManyRequests', 'InternalError', 'ServiceUnavailable')
/** Errors of an operation that needs a scope: the keyed ones and 403. */
export const scopedErrors = (...extra: string[]): Json => keyedErrors(...extra, 'Forbidden')
export const ok = (description: string, schema: Json): Json => ({ description, headers: budgetHeaders(true), content: json(schema) })
/** A 201: the resource made, and its URL in `Location`. */
export const created = (description: string, location: string, schema: Json): Json => ({
  description,
  headers: { ...budgetHeaders(true), Location: { description: location, required: true, schema: { type: 'string' } } },
  content: json(schema)
})
export const noContent = (description: string): Json => ({ description, headers: budgetHeaders(true) })
export const noKey: Json[] = []
/** The key must hold this scope (see the bearerAuth scheme); the server's route table declares the same. */
export const scope = (name: Scope): Json[] => [{ bearerAuth: [name] }]
