// Object ids as git prints them. Data only, with no imports: the webview's protocol uses it too.

/** The hex digits of a full SHA-1 (40) or SHA-256 (64) id, as a regular expression source without anchors. */
export const OID_HEX = '[0-9a-f]{40}(?:[0-9a-f]{24})?';

/** A full SHA-1 or SHA-256 object id (lower-case hex, as git prints it), when the repository's hash is not known. */
export const FULL_OID = new RegExp(`^${OID_HEX}$`);

/** A full object id of exactly one hash: what a repository of that object format prints. */
export const OID_OF_FORMAT: Readonly<Record<'sha1' | 'sha256', RegExp>> = {
  sha1: /^[0-9a-f]{40}$/,
  sha256: /^[0-9a-f]{64}$/,
};
