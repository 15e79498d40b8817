package dev.usnet.tools.cli;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;

/**
 * Says why a file operation failed in the words of the C library's {@code strerror}. Java's file-system
 * exceptions often carry only the path as their message ({@code NoSuchFileException: out/a.pcap}), which
 * names the file but not the reason.
 */
public final class IoErrors {
    private IoErrors() {}

    /**
     * The errno name behind a reason that is one of the C library's strerror texts (Java keeps only the text):
     * {@code ENOSPC} for {@code No space left on device}; null when the reason is not one of those.
     */
    public static String errno(IOException e) {
        return switch (reason(e)) {
            case "No space left on device" -> "ENOSPC";
            case "Disk quota exceeded" -> "EDQUOT";
            case "Input/output error" -> "EIO";
            case "File too large" -> "EFBIG";
            case "Read-only file system" -> "EROFS";
            case "Permission denied" -> "EACCES";
            case "No such file or directory" -> "ENOENT";
            case "Stale file handle" -> "ESTALE";
            case "Bad file descriptor" -> "EBADF";
            default -> null;
        };
    }

    /** {@link #describe} with the errno name when there is one: {@code out/a.pcap: No space left on device (ENOSPC)}. */
    public static String describeWithErrno(Path file, IOException e) {
        String errno = errno(e);
        return describe(file, e) + (errno == null ? "" : " (" + errno + ")");
    }

    /** The reason alone: {@code Permission denied}, {@code No such file or directory}, … */
    public static String reason(IOException e) {
        if (e instanceof FileSystemException fse && fse.getReason() != null) {
            return fse.getReason();
        }
        if (e instanceof NoSuchFileException) {
            return "No such file or directory";
        }
        if (e instanceof AccessDeniedException) {
            return "Permission denied";
        }
        if (e instanceof FileAlreadyExistsException) {
            return "File exists";
        }
        if (e instanceof NotDirectoryException) {
            return "Not a directory";
        }
        if (e instanceof DirectoryNotEmptyException) {
            return "Directory not empty";
        }
        if (e instanceof FileSystemException fse) {
            return e.getClass().getSimpleName() + (fse.getOtherFile() != null ? " (" + fse.getOtherFile() + ")" : "");
        }
        return e.getMessage() != null && !e.getMessage().isBlank() ? e.getMessage() : e.getClass().getSimpleName();
    }

    /**
     * {@code FILE: reason}. A message that already starts with the file (as the pcap reader's do) is kept;
     * a file-system exception about another path (a parent directory) names that path too.
     */
    public static String describe(Path file, IOException e) {
        String f = file.toString();
        if (e instanceof FileSystemException fse) {
            String other = fse.getFile();
            String about = other != null && !other.equals(f) ? " (" + other + ")" : "";
            return f + ": " + reason(e) + about;
        }
        String m = e.getMessage();
        if (m != null && m.startsWith(f)) {
            return m;
        }
        return f + ": " + reason(e);
    }
}
