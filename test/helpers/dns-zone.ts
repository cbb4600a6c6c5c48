/**
 * A small authoritative-and-recursive DNS server for `dns` checks, on a loopback UDP port in this
 * process: a zone of names, each with records by type in dig's data form (`10 mx.mail.test` for
 * MX, `0 issue "letsencrypt.org"` for CAA, `1 5 443 srv.test` for SRV), or an rcode of its own, or
 * `drop` (no answer at all). A name not in the zone is NXDOMAIN; `.` is the root zone. The zone may
 * change while it runs.
 */
import dgram from 'node:dgram'
import type { Test } from 'tap'

type RecordType = 'A' | 'AAAA' | 'CNAME' | 'MX' | 'TXT' | 'NS' | 'CAA' | 'SRV'
const TYPE_CODES: Record<RecordType, number> = { A: 1, NS: 2, CNAME: 5, MX: 15, TXT: 16, AAAA: 28, SRV: 33, CAA: 257 }
const RCODES = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const

export type ZoneEntry = Partial<Record<RecordType, string[]>> & { rcode?: keyof typeof RCODES | 'drop' }

export interface DnsZone {
  /** `127.0.0.1:port`, as DNS_SERVERS takes it. */
  address: string
  /** Replaces a name's entry (its records, or its rcode). */
  set(name: string, entry: ZoneEntry): void
  /** Questions seen, as `TYPE name`. */
  queries: string[]
}

function encodeName(name: string): Buffer {
  const parts = name
    .replace(/\.$/, '')
    .split('.')
    .filter((l) => l !== '')
    .map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, 'latin1')]))
  return Buffer.concat([...parts, Buffer.from([0])])
}

const u16 = (n: number): Buffer => {
  const b = Buffer.alloc(2)
  b.writeUInt16BE(n)
  return b
}

function ipv6(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::')
  const words = (s: string): number[] => (s === '' ? [] : s.split(':').map((w) => parseInt(w, 16)))
  const h = words(head)
  const t = address.includes('::') ? words(tail) : []
  const all = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t]
  return Buffer.concat(all.map(u16))
}

/** A record's data on the wire, from dig's text form. */
function rdata(type: RecordType, text: string): Buffer {
  const fields = text.split(' ')
  switch (type) {
    case 'A':
      return Buffer.from(text.split('.').map(Number))
    case 'AAAA':
      return ipv6(text)
    case 'CNAME':
    case 'NS':
      return encodeName(text)
    case 'MX':
      return Buffer.concat([u16(Number(fields[0])), encodeName(fields[1] ?? '')])
    case 'TXT':
      return Buffer.concat([Buffer.from([Buffer.byteLength(text)]), Buffer.from(text)])
    case 'SRV':
      return Buffer.concat([u16(Number(fields[0])), u16(Number(fields[1])), u16(Number(fields[2])), encodeName(fields[3] ?? '')])
    case 'CAA': {
      const tag = fields[1] ?? 'issue'
      const value = fields.slice(2).join(' ').replace(/^"|"$/g, '')
      return Buffer.concat([Buffer.from([Number(fields[0]), tag.length]), Buffer.from(tag), Buffer.from(value)])
    }
  }
}

function readQuestion(msg: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = []
  let i = 12
  for (let len = msg[i] ?? 0; len > 0; len = msg[i] ?? 0) {
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('latin1'))
    i += 1 + len
  }
  return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(i + 1), end: i + 5 }
}

export async function startDnsZone(t: Test, zone: Record<string, ZoneEntry>): Promise<DnsZone> {
  // A name as asked (lower case, no trailing dot): the root zone `.` is ''.
  const key = (name: string): string => name.toLowerCase().replace(/\.$/, '')
  const entries = new Map(Object.entries(zone).map(([name, entry]) => [key(name), entry]))
  const queries: string[] = []
  const socket = dgram.createSocket('udp4')
  socket.on('message', (msg, peer) => {
    if (msg.length < 17) return
    const q = readQuestion(msg)
    const type = (Object.keys(TYPE_CODES) as RecordType[]).find((k) => TYPE_CODES[k] === q.type)
    queries.push(`${type ?? q.type} ${q.name}`)
    const entry = entries.get(q.name)
    if (entry?.rcode === 'drop') return
    const rcode = entry === undefined ? RCODES.NXDOMAIN : RCODES[entry.rcode ?? 'NOERROR']
    const records = type === undefined || entry === undefined ? [] : (entry[type] ?? [])
    const header = Buffer.alloc(12)
    msg.copy(header, 0, 0, 2)
    header.writeUInt16BE(0x8580 | rcode, 2) // response, authoritative, recursion desired and available
    header.writeUInt16BE(1, 4)
    header.writeUInt16BE(rcode === 0 ? records.length : 0, 6)
    const answers =
      rcode !== 0 || type === undefined
        ? []
        : records.map((text) => {
            const data = rdata(type, text)
            return Buffer.concat([u16(0xc00c), u16(TYPE_CODES[type]), u16(1), Buffer.alloc(4), u16(data.length), data])
          })
    socket.send(Buffer.concat([header, msg.subarray(12, q.end), ...answers]), peer.port, peer.address)
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) =>
        socket.close(() => {
          resolve()
        })
      )
  )
  return {
    address: `127.0.0.1:${socket.address().port}`,
    set: (name, entry) => entries.set(key(name), entry),
    queries
  }
}
