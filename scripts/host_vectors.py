"""Independent reimplementation of the host-proof vectors of protocol/SPEC.md
§23.5, from the SPEC's text alone: pure-Python BLAKE3 (no dependencies),
then every derivation of §23. Prints each vector it recomputes and exits 1
if any differs from the SPEC's block. Usage: python3 scripts/host_vectors.py"""
import re
import sys

M64 = (1 << 64) - 1
IV = [0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19]
PERM = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8]
CHUNK_START, CHUNK_END, PARENT, ROOT, KEYED, DK_CTX, DK_MAT = 1, 2, 4, 8, 16, 32, 64


def rotr32(x, n):
    return ((x >> n) | (x << (32 - n))) & 0xFFFFFFFF


def compress(cv, block, counter, blen, flags):
    m = [int.from_bytes(block[4 * i:4 * i + 4], "little") for i in range(16)]
    s = cv[:] + IV[:4] + [counter & 0xFFFFFFFF, counter >> 32, blen, flags]

    def g(a, b, c, d, x, y):
        s[a] = (s[a] + s[b] + x) & 0xFFFFFFFF; s[d] = rotr32(s[d] ^ s[a], 16)
        s[c] = (s[c] + s[d]) & 0xFFFFFFFF; s[b] = rotr32(s[b] ^ s[c], 12)
        s[a] = (s[a] + s[b] + y) & 0xFFFFFFFF; s[d] = rotr32(s[d] ^ s[a], 8)
        s[c] = (s[c] + s[d]) & 0xFFFFFFFF; s[b] = rotr32(s[b] ^ s[c], 7)
    for r in range(7):
        g(0, 4, 8, 12, m[0], m[1]); g(1, 5, 9, 13, m[2], m[3]); g(2, 6, 10, 14, m[4], m[5]); g(3, 7, 11, 15, m[6], m[7])
        g(0, 5, 10, 15, m[8], m[9]); g(1, 6, 11, 12, m[10], m[11]); g(2, 7, 8, 13, m[12], m[13]); g(3, 4, 9, 14, m[14], m[15])
        if r < 6:
            m = [m[p] for p in PERM]
    return [s[i] ^ s[i + 8] for i in range(8)] + [s[i + 8] ^ cv[i] for i in range(8)]


def words(b):
    return [int.from_bytes(b[4 * i:4 * i + 4], "little") for i in range(len(b) // 4)]


def wbytes(w):
    return b"".join(x.to_bytes(4, "little") for x in w)


def chunk_node(key, chunk, counter, flags):
    """The last block's compression inputs of a chunk: (cv, block, counter, len, flags)."""
    cv = key
    blocks = [chunk[i:i + 64] for i in range(0, len(chunk), 64)] or [b""]
    for i, blk in enumerate(blocks):
        f = flags | (CHUNK_START if i == 0 else 0) | (CHUNK_END if i == len(blocks) - 1 else 0)
        if i == len(blocks) - 1:
            return (cv, blk.ljust(64, b"\0"), counter, len(blk), f)
        cv = compress(cv, blk, counter, 64, f)[:8]


def left_len(n):  # largest power of two strictly below n (n >= 2), in chunks
    p = 1
    while p * 2 < n:
        p *= 2
    return p


def subtree_node(key, data, counter, flags):
    n = max(1, (len(data) + 1023) // 1024)
    if n == 1:
        return chunk_node(key, data, counter, flags)
    k = left_len(n)
    l = output_cv(subtree_node(key, data[:1024 * k], counter, flags))
    r = output_cv(subtree_node(key, data[1024 * k:], counter + k, flags))
    return (key, wbytes(l + r), 0, 64, flags | PARENT)


def output_cv(node):
    cv, blk, ctr, blen, f = node
    return compress(cv, blk, ctr, blen, f)[:8]


def output(node, n):
    cv, blk, _, blen, f = node
    out = b""
    t = 0
    while len(out) < n:
        out += wbytes(compress(cv, blk, t, blen, f | ROOT))
        t += 1
    return out[:n]


def b3(data, n=32, key=None, flags=0):
    return output(subtree_node(words(key) if key else IV, data, 0, flags | (KEYED if key else 0)), n)


def derive_key(ctx, material, n=32):
    ck = b3(ctx.encode(), 32, flags=DK_CTX)
    return output(subtree_node(words(ck), material, 0, DK_MAT), n)


def parent_cv(l, r, root=False):
    return wbytes(compress(IV, l + r, 0, 64, PARENT | (ROOT if root else 0))[:8])


def tree_root(leaves):  # SPEC §6 over 32-byte leaf chaining values
    def node(lv, top):
        if len(lv) == 1:
            return lv[0]
        k = left_len(len(lv))
        return parent_cv(node(lv[:k], False), node(lv[k:], False), top)
    return node(leaves, True)


# §23 derivations
def DK(ctx, *parts):
    return derive_key("pog 2026-12-01 host " + ctx, b"".join(parts))


def XOF(key, n):
    return b3(b"", n, key=key)


le64 = lambda x: x.to_bytes(8, "little")
be64 = lambda x: x.to_bytes(8, "big")
be32 = lambda x: x.to_bytes(4, "big")
rotl = lambda x, r: ((x << r) | (x >> (64 - r))) & M64
lewords = lambda b: [int.from_bytes(b[8 * i:8 * i + 8], "little") for i in range(len(b) // 8)]
hexw = lambda ws: "[" + " ".join("%016x" % w for w in ws) + "]"


def leaf(tag, g, state):
    return DK(tag + " checkpoint", le64(g), state)


def sample(secret, root, params, tiles, k):  # SPEC §8.3
    key = derive_key("pog 2026-11-29 sample indices v1", secret + root + params)
    limit = M64 - M64 % tiles
    stream, pos, out = XOF(key, 8 * 4096), 0, []
    while len(out) < min(k, tiles):
        x = int.from_bytes(stream[pos:pos + 8], "little"); pos += 8
        if x < limit and x % tiles not in out:
            out.append(x % tiles)
    return "[" + " ".join(str(i) for i in sorted(out)) + "]"


def commit(out, tag, name, states, params, secret):
    leaves = [leaf(tag, g, s) for g, s in enumerate(states)]
    root = tree_root(leaves)
    out.append((name + ".leaf0", leaves[0].hex()))
    out.append((name + ".root", root.hex()))
    out.append((name + ".sample3", sample(secret, root, params, len(states), 3)))


def vectors():
    seed, miner, secret = bytes(range(32)), b"pog test miner", b"\x01" * 32
    out = []
    # §23.2 CPU
    tlog, C, N, S, window_ms, run_ms, scale_log = 10, 2, 64, 16, 2000, 1900, 10
    params = seed + bytes([len(miner)]) + miner + bytes([tlog]) + be64(C) + be64(N) + be64(S) + be32(window_ms) + be32(run_ms) + bytes([scale_log])
    T = lewords(XOF(DK("cpu table", seed, miner), 8 << tlog))
    init = lambda c: lewords(XOF(DK("cpu chain", seed, miner, le64(c)), 128))
    mul = 0x9E3779B97F4A7C15

    def step(x):
        v = [T[w & ((1 << tlog) - 1)] for w in x]
        return [(rotl(((x[j] ^ v[j]) * mul) & M64, 29) + v[(j + 1) % 16]) & M64 for j in range(16)]
    enc = lambda x: b"".join(le64(w) for w in x)
    out += [("cpu.params", params.hex()), ("cpu.table[0]", "%016x" % T[0]), ("cpu.table[1023]", "%016x" % T[1023]),
            ("cpu.initial(1)", enc(init(1)).hex()), ("cpu.initial(1)+1step", enc(step(init(1))).hex())]
    states = []
    for c in range(C):
        x = init(c)
        for _ in range(N // S):
            for _ in range(S):
                x = step(x)
            states.append(enc(x))
    out.append(("cpu.checkpoint0", states[0].hex()))
    commit(out, "cpu", "cpu", states, params, secret)

    # §23.3 RAM
    clog, rounds, D, C, N, S = 4, 4, 1000, 2, 32, 8
    params = seed + bytes([clog]) + be32(rounds) + seed + bytes([len(miner)]) + miner + be64(D) + be64(C) + be64(N) + be64(S)
    cache = lewords(XOF(DK("ram cache", seed), 64 << clog))
    m, m2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB

    key = int.from_bytes(DK("ram miner", miner)[:8], "little")

    def item(i):
        r, p = [(((i + j) * m) & M64) ^ key for j in range(8)], i
        for _ in range(rounds):
            L = cache[8 * (p % (1 << clog)):][:8]
            a = r[7]
            for j in range(8):
                a = (rotl(((a ^ L[j]) * m) & M64, 23) + r[j]) & M64
                r[j] = a
            p = a
        return r

    def walk(x, n):
        for _ in range(n):
            for v in item(x % D):
                x = rotl(((x ^ v) * m2) & M64, 31)
        return x
    winit = lambda w: int.from_bytes(DK("ram walk", seed, miner, le64(w))[:8], "little")
    out += [("ram.params", params.hex()), ("ram.item(0)", hexw(item(0))), ("ram.item(999)", hexw(item(999))),
            ("ram.initial(1)", "%016x" % winit(1)), ("ram.initial(1)+1step", "%016x" % walk(winit(1), 1))]
    states = []
    for w in range(C):
        x = winit(w)
        for _ in range(N // S):
            x = walk(x, S)
            states.append(le64(x))
    out.append(("ram.checkpoint0", states[0].hex()))
    commit(out, "ram", "ram", states, params, secret)
    out.append(("ram.period_seed(7)", DK("ram period", be64(7)).hex()))

    # §23.4 plot
    blog, rounds, n = 10, 2, 8
    pparams = bytes([len(miner)]) + miner + bytes([blog]) + be32(rounds) + be64(n)

    def block(b):  # rounds layers of 64-byte labels, the last one the block
        key = DK("plot layered block", bytes([len(miner)]) + miner + bytes([blog]) + be32(rounds), le64(b))
        lab, m, prev = XOF(key, 64), (1 << blog) // 64, []
        for p in range(rounds):
            cur = []
            for j in range(m):
                par = le64(j) + bytes(56) if p == 0 else prev[int.from_bytes(lab[:8], "little") % m]
                lab = b3(lab + bytes(x ^ y for x, y in zip(lab, par)), 64, key=key)
                cur.append(lab)
            prev = cur
        return b"".join(prev)
    blocks = [block(b) for b in range(n)]
    proot = b3(b"".join(blocks))
    leaf7 = wbytes(output_cv(chunk_node(IV, blocks[7], 7, 0)))
    out += [("plot.params", pparams.hex()), ("plot.block(0)[0:64]", blocks[0][:64].hex()),
            ("plot.blake3(block(7))", b3(blocks[7]).hex()), ("plot.leaf(7)", leaf7.hex()), ("plot.root", proot.hex())]
    C, N, S = 2, 8, 4
    aparams = pparams + proot + seed + be64(C) + be64(N) + be64(S)
    pinit = lambda w: DK("plot walk", seed, bytes([len(miner)]), miner, le64(w))
    out += [("plot.audit.params", aparams.hex()), ("plot.initial(1)", pinit(1).hex())]
    states = []
    for w in range(C):
        s = pinit(w)
        for _ in range(N // S):
            for _ in range(S):
                b = int.from_bytes(s[:8], "little") % n
                s = DK("plot step", s, le64(b), blocks[b])
            states.append(s)
    out.append(("plot.checkpoint0", states[0].hex()))
    commit(out, "plot", "plot.audit", states, aparams, secret)
    return out


def main():
    spec = open(__file__.rsplit("/", 2)[0] + "/protocol/SPEC.md").read()
    block = re.search(r"```pog-vectors host\n(.*?)```", spec, re.S).group(1)
    want = [l.split(" ", 1) for l in block.strip().split("\n")]
    got = vectors()
    bad = 0
    for (gn, gv), (wn, wv) in zip(got, want):
        ok = gn == wn and gv == wv
        bad += not ok
        print(("ok   " if ok else "DIFF ") + gn + ("" if ok else "\n  got  %s\n  want %s %s" % (gv, wn, wv)))
    if len(got) != len(want):
        print("DIFF %d vectors computed, SPEC lists %d" % (len(got), len(want)))
        bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
