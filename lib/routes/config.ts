import Boom from '@hapi/boom'
import type { RouteOptionsPayload, ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { requireScope } from '../auth.js'
import { applyFile, ConfigLockedError, ConfigRefusedError, planFile } from '../as-code/apply.js'
import { configJsonSchema, SCHEMA_PATH } from '../as-code/schema.js'
import type { ConfigFile } from '../rules/config-file.js'
import { MAX_FILE_BYTES, parseConfigText, problemText } from '../rules/config-parse.js'
import { planCounts, planText, type ConfigPlan } from '../rules/config-plan.js'
import type { Db } from '../store/db.js'
import type { SecretBox } from '../webhooks/secret-box.js'

const pruneQuery = Joi.object({ prune: Joi.boolean().default(false) }).unknown(false)

/** What the API calls the file in its errors: it has no name of its own. */
const BODY_NAME = 'request body'

/**
 * The body as a file: YAML or JSON text. The API reads no environment, so a `${NAME}` in a body is
 * refused as not set (docs/decisions.md, "Monitoring as code").
 */
function fileOf(payload: unknown): ConfigFile {
  const text = Buffer.isBuffer(payload) ? payload.toString('utf8') : ''
  const parsed = parseConfigText(text, BODY_NAME, {})
  if (!parsed.ok) throw Boom.badRequest(parsed.problems.map(problemText).join('\n'))
  return parsed.file
}

function planRecord(plan: ConfigPlan, applied: boolean): Record<string, unknown> {
  return {
    changed: plan.items.length > 0,
    summary: planCounts(plan),
    kept: plan.kept,
    items: plan.items,
    text: planText(plan, { applied })
  }
}

function refused(err: unknown): never {
  if (err instanceof ConfigLockedError) throw Boom.conflict(err.message)
  if (err instanceof ConfigRefusedError) throw Boom.badRequest(err.message)
  throw err
}

/**
 * Monitoring as code over the API: the file's JSON Schema (open, for editors), a plan and an apply
 * (manage). After an apply, `sitesChanged` brings this instance's scheduler and state up to date;
 * the others see the moved `changed_at` at their next look, as after any site change.
 */
export function configRoutes({
  db,
  now,
  publicUrl,
  sitesChanged,
  pagesChanged,
  webhooks
}: {
  db: Db
  /** The secret box that seals webhook and channel secrets. */
  webhooks: { box: SecretBox }
  now: () => Date
  publicUrl: string
  sitesChanged: () => Promise<void>
  pagesChanged: (slugs: readonly string[]) => void
}): ServerRoute[] {
  const schema = JSON.stringify(configJsonSchema(publicUrl))
  const payload: RouteOptionsPayload = {
    parse: false,
    output: 'data',
    maxBytes: MAX_FILE_BYTES,
    allow: ['application/yaml', 'application/json', 'text/plain', 'text/yaml']
  }
  return [
    {
      method: 'GET',
      path: SCHEMA_PATH,
      options: { auth: false },
      handler: (_request, h) =>
        h
          .response(schema)
          .type('application/schema+json; charset=utf-8')
          .header('access-control-allow-origin', '*')
          .header('cache-control', 'public, max-age=300')
    },
    {
      method: 'POST',
      path: '/api/v1/config/plan',
      options: { auth: requireScope('manage'), payload, validate: { query: pruneQuery } },
      handler: async (request) => {
        const file = fileOf(request.payload)
        const { prune } = request.query as { prune: boolean }
        return planRecord(await planFile({ db, file, prune, box: webhooks.box }).catch(refused), false)
      }
    },
    {
      method: 'POST',
      path: '/api/v1/config/apply',
      options: { auth: requireScope('manage'), payload, validate: { query: pruneQuery } },
      handler: async (request) => {
        const file = fileOf(request.payload)
        const { prune } = request.query as { prune: boolean }
        const applied = await applyFile({ db, file, prune, now, box: webhooks.box }).catch(refused)
        if (applied.plan.items.length > 0) {
          await sitesChanged()
          pagesChanged(applied.pages)
        }
        return planRecord(applied.plan, true)
      }
    }
  ]
}
