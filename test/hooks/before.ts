// Runs once before the suite (package.json tap.before): every run checks only its own log lines,
// and the actors and spawned commands run the current sources, compiled.
import { compileForTests } from '../helpers/compiled.js'
import { clearSuiteLog } from '../helpers/suite-log.js'

clearSuiteLog()
await compileForTests()
