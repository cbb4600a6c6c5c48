import { isIP } from 'node:net'
import { inRanges } from './target-policy.js'

/**
 * The address a request came from, for bounds counted per client: the connection's peer, unless
 * the peer is a trusted reverse proxy (`trusted`, CIDR ranges), in which case `X-Forwarded-For` is
 * read from the right: each proxy appends the address it saw, so the first address there that is
 * not itself a trusted proxy is the client, and what lies to its left was written by the client and
 * is not believed. A header that holds no usable address leaves the peer.
 */
export function clientAddress(peer: string, forwardedFor: string | string[] | undefined, trusted: readonly string[]): string {
  if (trusted.length === 0 || forwardedFor === undefined || !inRanges(trusted, peer)) return peer
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',').map((hop) => hop.trim())
  let client = peer
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] as string
    if (isIP(hop) === 0) return client
    client = hop
    if (!inRanges(trusted, hop)) return hop
  }
  return client
}
