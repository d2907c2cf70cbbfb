#!/usr/bin/python3
"""toggle_fs.py — a folder mirrored through FUSE that can be made read-only and writable again while files on it
are open, as a failing disk goes read-only under a running program (which `mount -o remount,ro` refuses while
any file is open for writing).

    /usr/bin/python3 toggle_fs.py SOURCE MOUNTPOINT SWITCH

Every call is passed to SOURCE; while the file SWITCH exists (outside the mount), each call that would change
something fails with EROFS (reads go on); once it is removed they succeed again. (A file, not a signal: libfuse's
threads serve the calls, and Python runs signal handlers on the main thread only, which libfuse holds.) Runs in the
foreground until unmounted (`umount MOUNTPOINT`). Needs Debian's python3-fusepy (its module is `fusepy`) and root
for the mount.
"""

import errno
import os
import sys

from fusepy import FUSE, FuseOSError, Operations

SWITCH = [None]


def read_only():
    return os.path.exists(SWITCH[0])


def writing(method):
    """A call that changes the folder: refused with EROFS while read-only."""
    def refused_when_read_only(self, *arguments):
        if read_only():
            raise FuseOSError(errno.EROFS)
        return method(self, *arguments)
    return refused_when_read_only


class Mirror(Operations):
    def __init__(self, root):
        self.root = os.path.realpath(root)

    def _path(self, path):
        return self.root + path

    def __call__(self, operation, path, *arguments):
        try:
            return super().__call__(operation, path, *arguments)
        except OSError as error:
            raise FuseOSError(error.errno or errno.EIO)

    def access(self, path, mode):
        if mode & os.W_OK and read_only():
            raise FuseOSError(errno.EROFS)
        if not os.access(self._path(path), mode):
            raise FuseOSError(errno.EACCES)

    def getattr(self, path, fh=None):
        st = os.lstat(self._path(path)) if fh is None else os.fstat(fh)
        return {key: getattr(st, key) for key in ("st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime", "st_nlink", "st_size", "st_uid")}

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._path(path))

    def readlink(self, path):
        return os.readlink(self._path(path))

    def statfs(self, path):
        st = os.statvfs(self._path(path))
        return {key: getattr(st, key) for key in ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")}

    def open(self, path, flags):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_TRUNC) and read_only():
            raise FuseOSError(errno.EROFS)
        return os.open(self._path(path), flags)

    def read(self, path, size, offset, fh):
        return os.pread(fh, size, offset)

    def release(self, path, fh):
        os.close(fh)

    def flush(self, path, fh):
        return 0

    # Locks are the kernel's own (FUSE keeps POSIX locks locally when the file system does not).

    @writing
    def create(self, path, mode, fi=None):
        return os.open(self._path(path), os.O_RDWR | os.O_CREAT, mode)

    @writing
    def write(self, path, data, offset, fh):
        return os.pwrite(fh, data, offset)

    @writing
    def truncate(self, path, length, fh=None):
        if fh is None:
            os.truncate(self._path(path), length)
        else:
            os.ftruncate(fh, length)

    @writing
    def fsync(self, path, datasync, fh):
        os.fdatasync(fh) if datasync else os.fsync(fh)

    @writing
    def chmod(self, path, mode):
        os.chmod(self._path(path), mode)

    @writing
    def chown(self, path, uid, gid):
        os.chown(self._path(path), uid, gid)

    @writing
    def mkdir(self, path, mode):
        os.mkdir(self._path(path), mode)

    @writing
    def rmdir(self, path):
        os.rmdir(self._path(path))

    @writing
    def unlink(self, path):
        os.unlink(self._path(path))

    @writing
    def rename(self, old, new):
        os.rename(self._path(old), self._path(new))

    @writing
    def symlink(self, target, source):
        os.symlink(source, self._path(target))

    @writing
    def link(self, target, source):
        os.link(self._path(source), self._path(target))

    @writing
    def utimens(self, path, times=None):
        os.utime(self._path(path), times)


def main():
    source, mountpoint, SWITCH[0] = sys.argv[1], sys.argv[2], sys.argv[3]
    FUSE(Mirror(source), mountpoint, foreground=True, nothreads=False, allow_other=True, default_permissions=False)


if __name__ == "__main__":
    main()
