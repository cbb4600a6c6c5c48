// The loopback DNS server of test/helpers/dns-server.ts, in a process of its own (as a real
// resolver is), so that a busy test process cannot leave its socket undrained. Rules arrive as JSON
// in argv[2]: [{ suffix, A, AAAA }], where an answer is a list of addresses, "nxdomain", "servfail"
// or "drop"; a name that matches no rule is NXDOMAIN.
import dgram from 'node:dgram'

const rules = JSON.parse(process.argv[2] ?? '[]')
const TYPES = { 1: 'A', 28: 'AAAA' }
const queries = []

function answerFor(name, type) {
  const rule = rules.find((r) => name === r.suffix || name.endsWith(`.${r.suffix}`))
  if (rule === undefined) return 'nxdomain'
  return type === 'other' ? [] : rule[type]
}

function readName(msg, offset) {
  const labels = []
  let i = offset
  for (let len = msg[i] ?? 0; len > 0; len = msg[i] ?? 0) {
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('latin1'))
    i += 1 + len
  }
  return { name: labels.join('.').toLowerCase(), end: i + 1 }
}

function rdata(type, address) {
  if (type === 'A') return Buffer.from(address.split('.').map(Number))
  const [head = '', tail = ''] = address.split('::')
  const words = (s) => (s === '' ? [] : s.split(':').map((w) => parseInt(w, 16)))
  const h = words(head)
  const t = words(tail)
  const all = [...h, ...new Array(8 - h.length - t.length).fill(0), ...t]
  const out = Buffer.alloc(16)
  all.forEach((w, k) => out.writeUInt16BE(w, k * 2))
  return out
}

function reply(query, questionEnd, rcode, type, addresses) {
  const header = Buffer.alloc(12)
  query.copy(header, 0, 0, 2) // the id
  header.writeUInt16BE(0x8180 | rcode, 2) // a response, recursion desired and available
  header.writeUInt16BE(1, 4)
  const answers = type === 'other' ? [] : addresses.filter((a) => (type === 'A') === a.includes('.'))
  header.writeUInt16BE(answers.length, 6)
  const records = answers.map((address) => {
    const data = rdata(type, address)
    const rr = Buffer.alloc(12)
    rr.writeUInt16BE(0xc00c, 0) // the question's name
    rr.writeUInt16BE(type === 'A' ? 1 : 28, 2)
    rr.writeUInt16BE(1, 4) // IN
    rr.writeUInt32BE(0, 6) // TTL 0: nothing cached, every look-up asks
    rr.writeUInt16BE(data.length, 10)
    return Buffer.concat([rr, data])
  })
  return Buffer.concat([header, query.subarray(12, questionEnd), ...records])
}

const socket = dgram.createSocket('udp4')
socket.on('message', (msg, peer) => {
  if (msg.length < 12) return
  const { name, end } = readName(msg, 12)
  const type = TYPES[msg.readUInt16BE(end)] ?? 'other'
  queries.push(`${type} ${name}`)
  const answer = answerFor(name, type)
  if (answer === 'drop') return
  const rcode = answer === 'nxdomain' ? 3 : answer === 'servfail' ? 2 : 0
  socket.send(reply(msg, end + 4, rcode, type, Array.isArray(answer) ? answer : []), peer.port, peer.address)
})
process.on('message', (m) => {
  if (m === 'queries') process.send({ queries })
})
process.on('disconnect', () => process.exit(0))
socket.bind(0, '127.0.0.1', () => process.send({ port: socket.address().port }))
