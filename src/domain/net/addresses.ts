// The one judge of whether an IP address is public, shared by `http(s)` URL sources (decisions.md
// §3: loopback, private and link-local addresses refused unless --allow-private-sources) and webhook
// receivers (workspace-api.md, URL rules: public addresses only), both when a URL is checked and in
// the connect-time `lookup` that keeps DNS rebinding out.
//
// The rule is an allow-list: an address is public only when it is verified global unicast. IPv4:
// ipaddr.js's range is `unicast` (so not loopback, private, link-local, carrier-grade NAT,
// unspecified, broadcast, multicast, reserved/documentation/benchmarking, AS112 or AMT). IPv6: inside
// 2000::/3 (global unicast) and ipaddr.js's range is `unicast` (so not documentation, benchmarking,
// ORCHID, AMT, AS112, …); everything outside 2000::/3 (::1, ::, fe80::/10, fc00::/7, ff00::/8,
// 100::/64, 5f00::/16, …) is private.
//
// An IPv6 address that embeds an IPv4 address is judged by that IPv4 address, because that is where
// the packets end up: IPv4-mapped ::ffff:0:0/96 (a dual-stack socket connects to the IPv4 address
// itself), IPv4-translated ::ffff:0:0:0/96, IPv4-compatible ::/96 (deprecated, RFC 4291 §2.5.5.1,
// but a stack may still route it as IPv4), NAT64 64:ff9b::/96 (RFC 6052), 6to4 2002::/16 (RFC 3056)
// and Teredo 2001::/32 (RFC 4380; both the server and the client address it carries must be public).
// So ::ffff:8.8.8.8 and 64:ff9b::808:808 (what DNS64 answers on an IPv6-only network) are public,
// while ::127.0.0.1, ::ffff:7f00:1, 2002:7f00:1:: and 64:ff9b::7f00:1 are loopback, hence private.
// The local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215) serves one operator's own network and places
// the IPv4 address according to a prefix length we cannot know, so it is always private.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface AddressVerdict {
  /** True only for verified global unicast (see the rule above). */
  public: boolean;
  /**
   * True for addresses the local stack delivers to this machine: 127.0.0.0/8, ::1, and 127.0.0.0/8
   * mapped into IPv6 (::ffff:127.0.0.1). Not for tunnelled or translated forms (6to4, NAT64, Teredo,
   * IPv4-compatible), which leave the machine; --allow-insecure-webhooks relies on this.
   */
  loopback: boolean;
  /** What the address is, for messages: `loopback`, `6to4 of 127.0.0.1: loopback`, `not an IP address`. */
  description: string;
}

const NOT_AN_ADDRESS: AddressVerdict = { public: false, loopback: false, description: 'not an IP address' };

/** Parses an IP literal (brackets allowed), or undefined for anything else. */
function parseLiteral(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  // net.isIP first: ipaddr.js also accepts shorthand forms (`127.1`, `0x7f000001`) no resolver returns.
  switch (isIP(bare)) {
    case 4:
      return ipaddr.IPv4.parse(bare);
    case 6: {
      // ipaddr.js 2.x reads `::a.b.c.d` as IPv4-mapped (::ffff:a.b.c.d); the WHATWG URL parser writes
      // every IPv6 address in canonical hex (`::7f00:1`), which ipaddr.js reads correctly. It also
      // refuses zone IDs (`fe80::1%eth0`), which are never global unicast anyway.
      let canonical: string;
      try {
        canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
      } catch {
        return undefined;
      }
      return ipaddr.IPv6.parse(canonical);
    }
    default:
      return undefined;
  }
}

function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The IPv4 addresses an IPv6 address carries (see the rule above), or undefined when it carries none. */
function embeddedIPv4(address: ipaddr.IPv6): { via: string; addresses: ipaddr.IPv4[] } | undefined {
  const p = address.parts as [number, number, number, number, number, number, number, number];
  const zero = (from: number, to: number) => p.slice(from, to).every((part) => part === 0);
  if (zero(0, 5) && p[5] === 0xffff) return { via: 'IPv4-mapped', addresses: [ipv4Of(p[6], p[7])] };
  if (zero(0, 4) && p[4] === 0xffff && p[5] === 0) return { via: 'IPv4-translated', addresses: [ipv4Of(p[6], p[7])] };
  if (zero(0, 6)) return { via: 'IPv4-compatible', addresses: [ipv4Of(p[6], p[7])] };
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) return { via: 'NAT64', addresses: [ipv4Of(p[6], p[7])] };
  if (p[0] === 0x2002) return { via: '6to4', addresses: [ipv4Of(p[1], p[2])] };
  // Teredo: the server's address in bits 32-63, the client's, inverted, in bits 96-127.
  if (p[0] === 0x2001 && p[1] === 0) return { via: 'Teredo', addresses: [ipv4Of(p[2], p[3]), ipv4Of(p[6] ^ 0xffff, p[7] ^ 0xffff)] };
  return undefined;
}

function judgeIPv4(address: ipaddr.IPv4): AddressVerdict {
  const range = address.range();
  return { public: range === 'unicast', loopback: range === 'loopback', description: range };
}

/** Judges an IP literal (brackets allowed); anything that is not an IP literal is not public. */
export function judgeAddress(ip: string): AddressVerdict {
  const address = parseLiteral(ip);
  if (!address) return NOT_AN_ADDRESS;
  if (address.kind() === 'ipv4') return judgeIPv4(address as ipaddr.IPv4);

  const v6 = address as ipaddr.IPv6;
  const range = v6.range();
  // Before the IPv4 forms: :: and ::1 lie in ::/96 too.
  if (range === 'unspecified' || range === 'loopback') return { public: false, loopback: range === 'loopback', description: range };
  if (v6.parts[0] === 0x64 && v6.parts[1] === 0xff9b && v6.parts[2] === 1) return { public: false, loopback: false, description: 'local-use NAT64 (64:ff9b:1::/48)' };

  const embedded = embeddedIPv4(v6);
  if (embedded) {
    const verdicts = embedded.addresses.map((a) => ({ address: a, verdict: judgeIPv4(a) }));
    const judged = verdicts.find((v) => !v.verdict.public) ?? verdicts[verdicts.length - 1]!;
    return {
      public: verdicts.every((v) => v.verdict.public),
      // Only a mapped address reaches this machine's own loopback interface.
      loopback: embedded.via === 'IPv4-mapped' && judged.verdict.loopback,
      description: `${embedded.via} ${judged.address.toString()}: ${judged.verdict.description}`,
    };
  }

  const globalUnicast = (v6.parts[0]! & 0xe000) === 0x2000;
  return { public: globalUnicast && range === 'unicast', loopback: false, description: !globalUnicast && range === 'unicast' ? 'outside global unicast 2000::/3' : range };
}

/** True only for verified global unicast addresses (see the rule at the top of this file). */
export function isPublicAddress(ip: string): boolean {
  return judgeAddress(ip).public;
}

/** True for 127.0.0.0/8, ::1 and IPv4-mapped 127.0.0.0/8: addresses of this machine itself. */
export function isLoopbackAddress(ip: string): boolean {
  return judgeAddress(ip).loopback;
}
