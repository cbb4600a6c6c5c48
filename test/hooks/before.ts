// Runs once before the suite (package.json tap.before): every run checks only its own log lines.
import { clearSuiteLog } from '../helpers/suite-log.js'

clearSuiteLog()
