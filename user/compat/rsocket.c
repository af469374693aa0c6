// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * librdmacm.so.1's rsockets (rdma/rsocket.h): not there yet. rsocket()
 * fails with EOPNOTSUPP, so no rsocket exists and every call on one is
 * EBADF; rpoll() and rselect() on ordinary descriptors are poll() and
 * select(), as in rdma-core (its example programs poll through them).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <rdma/rsocket.h>

#define SV_EXPORT __attribute__((visibility("default")))

SV_EXPORT int rsocket(int domain, int type, int protocol)
{
	errno = EOPNOTSUPP;
	return -1;
}

SV_EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

SV_EXPORT int rselect(int nfds, fd_set *readfds, fd_set *writefds,
		      fd_set *exceptfds, struct timeval *timeout)
{
	return select(nfds, readfds, writefds, exceptfds, timeout);
}

#define SV_NO_RSOCKET(ret, name, ...)			\
	SV_EXPORT ret name(__VA_ARGS__)			\
	{						\
		errno = EBADF;				\
		return (ret)-1;				\
	}

SV_NO_RSOCKET(int, rbind, int s, const struct sockaddr *a, socklen_t l)
SV_NO_RSOCKET(int, rlisten, int s, int backlog)
SV_NO_RSOCKET(int, raccept, int s, struct sockaddr *a, socklen_t *l)
SV_NO_RSOCKET(int, rconnect, int s, const struct sockaddr *a, socklen_t l)
SV_NO_RSOCKET(int, rshutdown, int s, int how)
SV_NO_RSOCKET(int, rclose, int s)
SV_NO_RSOCKET(ssize_t, rrecv, int s, void *buf, size_t len, int flags)
SV_NO_RSOCKET(ssize_t, rrecvfrom, int s, void *buf, size_t len, int flags,
	      struct sockaddr *a, socklen_t *l)
SV_NO_RSOCKET(ssize_t, rrecvmsg, int s, struct msghdr *msg, int flags)
SV_NO_RSOCKET(ssize_t, rsend, int s, const void *buf, size_t len, int flags)
SV_NO_RSOCKET(ssize_t, rsendto, int s, const void *buf, size_t len, int flags,
	      const struct sockaddr *a, socklen_t l)
SV_NO_RSOCKET(ssize_t, rsendmsg, int s, const struct msghdr *msg, int flags)
SV_NO_RSOCKET(ssize_t, rread, int s, void *buf, size_t count)
SV_NO_RSOCKET(ssize_t, rreadv, int s, const struct iovec *iov, int iovcnt)
SV_NO_RSOCKET(ssize_t, rwrite, int s, const void *buf, size_t count)
SV_NO_RSOCKET(ssize_t, rwritev, int s, const struct iovec *iov, int iovcnt)
SV_NO_RSOCKET(int, rgetpeername, int s, struct sockaddr *a, socklen_t *l)
SV_NO_RSOCKET(int, rgetsockname, int s, struct sockaddr *a, socklen_t *l)
SV_NO_RSOCKET(int, rsetsockopt, int s, int level, int optname,
	      const void *optval, socklen_t optlen)
SV_NO_RSOCKET(int, rgetsockopt, int s, int level, int optname, void *optval,
	      socklen_t *optlen)
SV_NO_RSOCKET(off_t, riomap, int s, void *buf, size_t len, int prot,
	      int flags, off_t offset)
SV_NO_RSOCKET(int, riounmap, int s, void *buf, size_t len)

SV_EXPORT int rfcntl(int s, int cmd, ...)
{
	errno = EBADF;
	return -1;
}

SV_EXPORT size_t riowrite(int s, const void *buf, size_t count, off_t offset,
			  int flags)
{
	errno = EBADF;
	return 0;
}
