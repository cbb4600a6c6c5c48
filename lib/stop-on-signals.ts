import type { Logger } from 'pino'
import { safeErrorSummary } from './errors.js'

/** A signal-initiated stop that has not finished by then exits 1 rather than hang. */
export const STOP_DEADLINE_MS = 9500

/** SIGTERM and SIGINT drain the service and exit 0; a failure to drain, or a drain past the deadline, exits 1. */
export function stopOnSignals(service: { stop(): Promise<void> }, logger: Logger, deadlineMs = STOP_DEADLINE_MS): void {
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'stopping')
    setTimeout(() => {
      logger.error({ deadlineMs }, 'stop did not finish in time; exiting')
      logger.flush()
      process.exit(1)
    }, deadlineMs).unref()
    service.stop().then(
      () => {
        logger.info('stopped')
        logger.flush()
        process.exit(0)
      },
      (err: unknown) => {
        logger.error({ err: safeErrorSummary(err) }, 'stop failed')
        logger.flush()
        process.exit(1)
      }
    )
  }
  process.once('SIGTERM', onSignal)
  process.once('SIGINT', onSignal)
}
