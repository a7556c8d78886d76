"""Accepts one IPv4 loopback connection on a dual-stack IPv6 listener, so the accepted socket
is AF_INET6 with v4-mapped addresses (::ffff:127.0.0.1). usage: tcp6_loopback.py PORT"""
import socket
import sys

port = int(sys.argv[1])
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", port))
s.listen(1)
c = socket.create_connection(("127.0.0.1", port))
a, _ = s.accept()
a.close()
c.close()
s.close()
