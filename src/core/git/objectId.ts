// Commit ids as git prints them. Data only, with no imports: the webview's protocol uses it too.

/** A full SHA-1 or SHA-256 commit id (lower-case hex, as git prints it). */
export const FULL_OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
