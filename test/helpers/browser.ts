import type { Test } from 'tap'
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

/** Debian's Chromium; CI installs it (`.ci/run`), and there its absence is a failure. */
export const CHROMIUM = '/usr/bin/chromium'

/**
 * Why the browser tests cannot run here, or null. Under CI a missing Chromium throws: the suite must
 * not pass without them. On a machine set up with the README's commands alone they are skipped,
 * saying why (`npm test` works on a fresh machine).
 */
export function chromiumMissing(): string | null {
  if (existsSync(CHROMIUM)) return null
  if (process.env.CI) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium; .ci/run does this)`)
  return `${CHROMIUM} is missing (apt-get install -y chromium): the browser tests are skipped`
}

/** Real headless Chromium, closed at teardown. Playwright gives every launch a fresh temporary profile. */
export async function launchChromium(t: Test): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium; .ci/run does this) to run the browser tests`
    )
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync'
    ],
    timeout: 60_000
  })
  t.teardown(() => browser.close())
  return browser
}
