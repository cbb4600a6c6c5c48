/**
 * Every code a TLS handshake can fail with in Node: OpenSSL's certificate verification results as
 * Node names them (`X509ErrorCode` in Node's crypto sources, `UNSPECIFIED` for any other), Node's
 * own `ERR_TLS_*`, and OpenSSL's library errors (`ERR_SSL_*`, `ERR_OSSL_*`; `EPROTO` and `SSL_*` on
 * older versions). A probe or a delivery that fails with one saw the site's TLS refuse it: down,
 * with the `tls` code, as curl and a browser without AIA fetching see it.
 */
export const X509_ERROR_CODES = [
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CRL_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CRL_NOT_YET_VALID',
  'CRL_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'ERROR_IN_CRL_LAST_UPDATE_FIELD',
  'ERROR_IN_CRL_NEXT_UPDATE_FIELD',
  'OUT_OF_MEM',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_CHAIN_TOO_LONG',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
  'UNSPECIFIED'
] as const

const X509 = new Set<string>(X509_ERROR_CODES)
const LIBRARY = /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|SSL_)|^EPROTO$/

/** Whether an error's code says the TLS handshake failed. */
export function isTlsErrorCode(code: string): boolean {
  return X509.has(code) || LIBRARY.test(code)
}
