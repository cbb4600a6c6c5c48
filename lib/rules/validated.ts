import type Joi from 'joi'

/** A value checked by a schema: its normal form, or the first problem's message (a 400's text). */
export type Validated<T> = { ok: true; value: T } | { ok: false; error: string }

/** Checks `input` by `schema` outside a route (the operator tool), as a route would. */
export function validated<T>(schema: Joi.Schema, input: unknown): Validated<T> {
  const result = schema.validate(input, { abortEarly: true }) as Joi.ValidationResult<T>
  if (result.error) return { ok: false, error: result.error.message }
  return { ok: true, value: result.value }
}
