// Runs once after the whole suite (package.json tap.after); a non-zero exit fails the run.
import { findSecrets, readSuiteLog } from '../helpers/suite-log.js'

const lines = readSuiteLog()
const leaks = findSecrets(lines)
const files = new Set(lines.map((l) => l.file)).size
if (leaks.length > 0) {
  console.error(`# suite logs: ${leaks.length} of ${lines.length} log lines carry a key or an Authorization header:`)
  for (const { file, line } of leaks.slice(0, 10)) console.error(`#   ${file}: ${line.slice(0, 300)}`)
  process.exitCode = 1
} else {
  console.log(`# suite logs: ${lines.length} log lines from ${files} test processes checked; none carries a key or an Authorization header`)
}
