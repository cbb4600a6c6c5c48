// Runs once before the suite (package.json tap.before): every run checks only its own log lines,
// the actors and spawned commands run the current sources, compiled, and test database templates
// of migrations that no longer exist are dropped.
import { compileForTests } from '../helpers/compiled.js'
import { dropStaleTemplates } from '../helpers/db-template.js'
import { clearSuiteLog } from '../helpers/suite-log.js'

clearSuiteLog()
await dropStaleTemplates(process.env.TEST_MYSQL_URL || undefined)
await compileForTests()
