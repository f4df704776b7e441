/* slurp.c - one whole-file reader for the program's text inputs: a regular file, opened without blocking, at most a given size. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io.h"

const char *io_file_kind(unsigned mode)
{
	const mode_t m = (mode_t)mode;
	return S_ISDIR(m) ? "a folder" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
	       : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* O_NONBLOCK: a FIFO is refused by the regular-file check rather than
 * waited on; fstat on the open descriptor, so the file checked is the file
 * read. */
int io_slurp(char **text, size_t *len, const char *path, size_t max, io_slurp_info *info)
{
	*info = (io_slurp_info){IO_READ_OK, 0, 0, 0};
	const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		*info = (io_slurp_info){errno == ENOENT ? IO_READ_MISSING : IO_READ_ERRNO, errno, 0, 0};
		if (fd >= 0)
			close(fd);
		return SKV_EIO;
	}
	info->mode = (unsigned)st.st_mode;
	info->size = (unsigned long long)st.st_size;
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		info->why = S_ISREG(st.st_mode) ? IO_READ_TOO_LARGE : IO_READ_NOT_REGULAR;
		close(fd);
		return SKV_EIO;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t n = 0;
	ssize_t k = 0;
	while (buf && n < (size_t)st.st_size && (k = read(fd, buf + n, (size_t)st.st_size - n)) > 0)
		n += (size_t)k;
	const int err = k < 0 ? errno : 0;
	close(fd);
	if (!buf || err) {
		info->why = buf ? IO_READ_ERRNO : IO_READ_NOMEM;
		info->err = err;
		free(buf);
		return buf ? SKV_EIO : SKV_ENOMEM;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return SKV_OK;
}
