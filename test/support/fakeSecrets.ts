/**
 * Token-shaped test values, built at run time so the repository itself holds no string a secret scanner (ours,
 * or a host's push protection) would flag. None of them was ever a real credential.
 */
const ALNUM = 'aB3dE5fG7hJ9kL2mN4pQ6rS8tU1vW0xYz';
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** `n` characters cycling through `alphabet`, offset by `seed`: deterministic, token-like (mixed classes). */
export function filler(n: number, seed = 0, alphabet = ALNUM): string {
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[(i * 7 + seed) % alphabet.length];
  return out;
}

export const FAKE = {
  openaiProject: () => `sk-${'proj'}-${filler(64, 1)}`,
  openaiLegacy: () => `sk-${filler(48, 2)}`,
  openaiMarked: () => `sk-${filler(20, 3)}${'T3Blbk'}FJ${filler(20, 4)}`,
  anthropic: () => `sk-${'ant'}-api03-${filler(93, 5)}`,
  awsKeyId: () => `${'AK'}IA${filler(16, 6, BASE32)}`,
  githubClassic: () => `${'gh'}p_${filler(36, 7)}`,
  githubFineGrained: () => `${'github'}_pat_${filler(22, 8)}_${filler(59, 9)}`,
  gitlab: () => `${'gl'}pat-${filler(20, 10)}`,
  slackBot: () => `${'xo'}xb-123456789012-1234567890123-${filler(24, 11)}`,
  slackWebhook: () =>
    `https://hooks.slack.com/services/T${filler(8, 12, BASE32)}/B${filler(8, 13, BASE32)}/${filler(24, 14)}`,
  stripeLive: () => `${'sk'}_live_${filler(24, 15)}`,
  jwt: () => `${'eyJ'}${filler(20, 16)}.${'eyJ'}${filler(40, 17)}.${filler(43, 18)}`,
  privateKeyHeader: (kind = 'OPENSSH ') => `-----BEGIN ${kind}${'PRIVATE'} KEY-----`,
};
