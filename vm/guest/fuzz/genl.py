"""Raw generic netlink for the kernel fuzzers (wire.py, nl.py): no YNL, no
subprocess per request (each python start costs seconds under TCG).

Attribute numbers come from netlink/crem.yaml: in a set, the n-th attribute
is n (from 1); the n-th operation is command n (from 1)."""
import ctypes
import os
import socket
import struct

NETLINK_GENERIC = 16
GENL_ID_CTRL = 16
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME, CTRL_ATTR_MCAST_GROUPS = 1, 2, 7
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLA_F_NESTED = 0x8000
SOL_NETLINK = 270
NETLINK_ADD_MEMBERSHIP, NETLINK_EXT_ACK, NETLINK_GET_STRICT_CHK = 1, 11, 12


def setns(path):
    """Enter the network namespace at @path (/run/netns/NAME) for the
    sockets made from now on (python 3.11 has no os.setns)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
            raise OSError(ctypes.get_errno(), f'setns {path}')
    finally:
        os.close(fd)


def nla(t, payload):
    """One attribute, padded to 4 octets."""
    n = 4 + len(payload)
    return struct.pack('=HH', n & 0xffff, t & 0xffff) + payload + b'\0' * (-n % 4)


def attrs(buf):
    """Parse attributes: [(type without flags, payload)]."""
    out, i = [], 0
    while i + 4 <= len(buf):
        n, t = struct.unpack_from('=HH', buf, i)
        if n < 4:
            break
        out.append((t & 0x3fff, buf[i + 4:i + n]))
        i += (n + 3) & ~3
    return out


class Genl:
    def __init__(self, rcvbuf=None):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        if rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.s.bind((0, 0))
        self.s.settimeout(2)
        self.seq = 1

    def close(self):
        self.s.close()

    def send(self, typ, flags, cmd, body, version=1, raw=None):
        """Send one message (or @raw octets as they are); its sequence number."""
        self.seq += 1
        if raw is None:
            payload = struct.pack('=BBH', cmd, version, 0) + body
            raw = struct.pack('=IHHII', 16 + len(payload), typ, flags, self.seq, 0) + payload
        self.s.send(raw)
        return self.seq

    def recv_all(self, seq, limit=1 << 20):
        """Messages answering @seq until the ACK/error or DONE: (errno, [genl
        payloads]); errno None when the dump ended without an error."""
        msgs = []
        while True:
            data = self.s.recv(limit)
            i = 0
            while i + 16 <= len(data):
                n, typ, _fl, s, _pid = struct.unpack_from('=IHHII', data, i)
                if n < 16:
                    return -1, msgs
                body = data[i + 16:i + n]
                i += (n + 3) & ~3
                if s != seq:
                    continue
                if typ == NLMSG_ERROR:
                    return -struct.unpack_from('=i', body)[0], msgs
                if typ == NLMSG_DONE:
                    return None, msgs
                msgs.append(body[4:])

    def request(self, typ, cmd, body=b'', dump=False):
        flags = NLM_F_REQUEST | NLM_F_ACK | (NLM_F_DUMP if dump else 0)
        return self.recv_all(self.send(typ, flags, cmd, body))

    def family(self, name):
        """(family id, {mcast group name: id}) of @name."""
        err, msgs = self.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                                 nla(CTRL_ATTR_FAMILY_NAME, name.encode() + b'\0'))
        if err or not msgs:
            raise OSError(err or 0, f'no genetlink family {name}')
        fid, groups = None, {}
        for t, p in attrs(msgs[0]):
            if t == CTRL_ATTR_FAMILY_ID:
                fid = struct.unpack('=H', p[:2])[0]
            elif t == CTRL_ATTR_MCAST_GROUPS:
                for _, g in attrs(p):
                    d = dict(attrs(g))
                    groups[d[1].rstrip(b'\0').decode()] = struct.unpack('=I', d[2][:4])[0]
        return fid, groups


# crem.yaml numbers used by wire.py to learn the live flows and the
# handlers' counts (nl.py checks them against the spec it is given). Each
# operation's messages carry its attribute set's attributes at their top
# level: a flow-get dump's, the flow's; stats-get's, the counters.
CMD_FLOW_GET, CMD_STATS_GET = 5, 3
FLOW = {1: 'pad', 2: 'id', 3: 'src', 4: 'dst', 5: 'dest-qp', 6: 'state', 7: 'config-id',
        8: 'scheme', 9: 'k', 10: 'm', 11: 'symbol-len', 17: 'side', 18: 'peer', 21: 'kind'}


def _int(p):
    return int.from_bytes(p, 'little') if len(p) in (1, 2, 4, 8) else p


def flows(g, fid):
    """The flows of the socket's netns, as dicts of FLOW's names."""
    err, msgs = g.request(fid, CMD_FLOW_GET, dump=True)
    out = []
    for m in msgs:
        f = {}
        for ft, fp in attrs(m):
            name = FLOW.get(ft)
            if name in ('src', 'dst', 'peer'):
                f[name] = bytes(fp)
            elif name:
                f[name] = _int(fp)
        out.append(f)
    return out


# The msg-types set in its order: attribute n (from 1) is MSG_TYPES[n - 1].
MSG_TYPES = ['repair', 'hello', 'hello-ack', 'param-update', 'param-ack', 'repair-request',
             'loss-report', 'path-report', 'close', 'tc-aeth', 'other']
A_STATS_TOTALS, A_FLOW_STATS_MSGS_IN_BY_TYPE = 20, 28


def handled_by_type(g, fid):
    """The netns totals of the flows' msgs-in-by-type: messages that reached
    a flow's handler, by type."""
    err, msgs = g.request(fid, CMD_STATS_GET)
    out = dict.fromkeys(MSG_TYPES, 0)
    for m in msgs:
        for t2, p2 in attrs(m):
            if t2 != A_STATS_TOTALS:
                continue
            for t3, p3 in attrs(p2):
                if t3 == A_FLOW_STATS_MSGS_IN_BY_TYPE:
                    for t4, p4 in attrs(p3):
                        if 1 <= t4 <= len(MSG_TYPES):
                            out[MSG_TYPES[t4 - 1]] = _int(p4)
    return out
