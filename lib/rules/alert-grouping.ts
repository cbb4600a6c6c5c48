/**
 * No floods: which of a channel's pending notifications go out now, and as which messages. Per
 * policy and channel, a notification with no message in the last `window` goes at once (with any
 * others already waiting); those that follow within the window wait for its end and go as one
 * grouped message. Per channel, at most `perMinute` messages in any 60 s: when more groups are
 * ready than that leaves room for, the last message is one summary of all that do not fit; when
 * there is no room, everything waits until there is.
 */

const MINUTE_MS = 60_000

/** Messages a channel receives in any 60 s at most (decisions.md, Alerts). */
export const MESSAGES_PER_MINUTE = 10
/** The grouping window of a policy that sets none. */
export const DEFAULT_GROUP_WINDOW_S = 60

/** A notification waiting for its message. */
export interface PendingNotification {
  id: number
  policy_id: number
  /** When it became due. */
  at: Date
}

/** What the channel has sent: when each policy's last message was made, and the times of its messages in the last minute. */
export interface ChannelHistory {
  lastByPolicy: ReadonlyMap<number, Date>
  recent: readonly Date[]
}

/** A message to make now: one policy's group, or (policy null) a summary of several. */
export interface ComposedGroup {
  policy_id: number | null
  ids: number[]
}

export interface Composition {
  groups: ComposedGroup[]
  /** When something held back may go (a window's end, room in the rate); null when nothing waits. */
  next: Date | null
}

/**
 * The messages to make now for one channel from its `pending` notifications (in the order they
 * were made), each policy's window (ms), its `history`, and the rate bound.
 */
export function composeChannel({
  pending,
  windowMs,
  history,
  now,
  perMinute = MESSAGES_PER_MINUTE
}: {
  pending: readonly PendingNotification[]
  windowMs: (policyId: number) => number
  history: ChannelHistory
  now: Date
  perMinute?: number
}): Composition {
  const byPolicy = new Map<number, PendingNotification[]>()
  for (const n of pending) {
    const list = byPolicy.get(n.policy_id)
    if (list) list.push(n)
    else byPolicy.set(n.policy_id, [n])
  }
  const ready: ComposedGroup[] = []
  let next: Date | null = null
  const later = (at: Date): void => {
    if (next === null || at < next) next = at
  }
  for (const [policyId, list] of byPolicy) {
    const last = history.lastByPolicy.get(policyId)
    const opensAt = last === undefined ? null : new Date(last.getTime() + windowMs(policyId))
    if (opensAt === null || opensAt <= now) ready.push({ policy_id: policyId, ids: list.map((n) => n.id) })
    else later(opensAt)
  }
  if (ready.length === 0) return { groups: [], next }
  // The oldest waiting goes first, whatever its policy.
  const firstId = (g: ComposedGroup): number => g.ids[0] ?? 0
  ready.sort((a, b) => firstId(a) - firstId(b))
  const inWindow = history.recent.filter((at) => now.getTime() - at.getTime() < MINUTE_MS).sort((a, b) => a.getTime() - b.getTime())
  const room = perMinute - inWindow.length
  if (room <= 0) {
    const oldest = inWindow[0]
    later(oldest === undefined ? now : new Date(oldest.getTime() + MINUTE_MS))
    return { groups: [], next }
  }
  if (ready.length <= room) return { groups: ready, next }
  const kept = ready.slice(0, room - 1)
  const rest = ready.slice(room - 1).flatMap((g) => g.ids)
  return { groups: [...kept, { policy_id: null, ids: rest.sort((a, b) => a - b) }], next }
}
