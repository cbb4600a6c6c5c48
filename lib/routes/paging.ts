import Joi from 'joi'

/** Items per page when the client names no `limit`, and the most it may ask for: every list pages alike. */
export const DEFAULT_LIMIT = 50
export const MAX_LIMIT = 200

const limitMessage = `"limit" must be a whole number from 1 to ${MAX_LIMIT}`

/** The `limit` query parameter of every paged list. */
export const pageLimit = Joi.number()
  .integer()
  .min(1)
  .max(MAX_LIMIT)
  .default(DEFAULT_LIMIT)
  .messages({ 'number.base': limitMessage, 'number.integer': limitMessage })
