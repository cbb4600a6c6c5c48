import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import type { Config } from '../../config/index.js'
import { applyFile, ConfigLockedError, ConfigRefusedError, opener, planFile } from '../as-code/apply.js'
import { exportConfigText } from '../as-code/export.js'
import { SCHEMA_PATH } from '../as-code/schema.js'
import type { ConfigFile } from '../rules/config-file.js'
import { MAX_FILE_BYTES, parseConfigText, problemText } from '../rules/config-parse.js'
import { planText } from '../rules/config-plan.js'
import type { Db } from '../store/db.js'
import { SecretBox } from '../webhooks/secret-box.js'
import { CommandError, UsageError, println, type CliIo } from './io.js'

export const CONFIG_HELP = `usage:
  site-status plan -f FILE [--prune]           what applying FILE (YAML or JSON) would create, change and
                                               remove, field by field; exit code 0, nothing written
  site-status apply -f FILE [--prune]          apply FILE in one transaction, all or nothing; --prune also
                                               removes what an earlier apply made that FILE leaves out
                                               (never what was made by hand)
  site-status export                           today's sites, monitors, pages, heartbeats, webhooks, channels
                                               and alert policies as such a file, on stdout (secrets as \${NAME})
A value written \${NAME} in FILE is NAME's value from the environment; secrets are never written out.`

/** Reads and checks the file named by -f; every problem is one line `FILE:LINE: FIELD: message`. */
function fileFrom(path: string, io: CliIo): ConfigFile {
  let text: string
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8')
  } catch (err) {
    throw new CommandError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`)
  }
  if (text.length > MAX_FILE_BYTES) throw new CommandError(`${path} is larger than ${MAX_FILE_BYTES} bytes`)
  const parsed = parseConfigText(text, path, io.env)
  if (!parsed.ok) throw new CommandError(`${path} is refused; nothing was written:\n${parsed.problems.map(problemText).join('\n')}`)
  return parsed.file
}

function options(args: string[]): { file: string; prune: boolean } {
  const { values, positionals } = parseArgs({
    args,
    options: { file: { type: 'string', short: 'f' }, prune: { type: 'boolean', default: false } },
    allowPositionals: true
  })
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`)
  if (values.file === undefined) throw new UsageError('-f FILE is required')
  return { file: values.file, prune: values.prune }
}

function refused(err: unknown): never {
  if (err instanceof ConfigLockedError || err instanceof ConfigRefusedError) throw new CommandError(err.message)
  throw err
}

type Open = () => Promise<{ db: Db; config: Config }>

/** `site-status plan`, `apply` and `export`. */
export async function configCommand(command: 'plan' | 'apply' | 'export', args: string[], io: CliIo, open: Open): Promise<number> {
  if (args.includes('--help')) {
    println(io.stdout, CONFIG_HELP)
    return 0
  }
  if (command === 'export') {
    if (args.length > 0) throw new UsageError(`unexpected argument "${args[0]}"`)
    const { db, config } = await open()
    const box = new SecretBox({ key: config.webhookKey, keyFile: config.webhookKeyFile })
    io.stdout.write(await exportConfigText({ db, schemaUrl: `${config.publicUrl}${SCHEMA_PATH}`, open: opener(box) }))
    return 0
  }
  const { file: path, prune } = options(args)
  const file = fileFrom(path, io)
  const { db, config } = await open()
  const box = new SecretBox({ key: config.webhookKey, keyFile: config.webhookKeyFile })
  if (command === 'plan') {
    println(io.stdout, planText(await planFile({ db, file, prune, box }).catch(refused)))
    return 0
  }
  const applied = await applyFile({ db, file, prune, now: io.now, box }).catch(refused)
  println(io.stdout, planText(applied.plan, { applied: true }))
  return 0
}
