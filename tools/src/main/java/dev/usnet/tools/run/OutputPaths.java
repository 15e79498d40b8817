package dev.usnet.tools.run;

import dev.usnet.tools.cli.UsageException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Where a run will write, checked before anything runs: a run that takes minutes and then cannot write its results
 * has wasted them. An output directory must be a directory or be creatable as one (its nearest existing ancestor a
 * writable directory); a results file must not be a directory and its directory must be creatable likewise. Neither
 * may need a new directory made at the filesystem root: a mistyped absolute path ({@code /nonexistent-dir/r.json})
 * would otherwise leave a directory there, so such a path is refused and the user makes the directory if meant.
 */
public final class OutputPaths {
    private OutputPaths() {}

    /** Throws a {@link UsageException} (exit 2) naming {@code option} when {@code dir} cannot be the output directory. */
    public static void checkDirectory(String option, Path dir) {
        if (Files.exists(dir)) {
            if (!Files.isDirectory(dir)) {
                throw new UsageException(option + " " + dir + ": Not a directory (it is a file; give a directory,"
                        + " or a path that does not exist yet)");
            }
            if (!Files.isWritable(dir)) {
                throw new UsageException(option + " " + dir + ": Permission denied (the directory is not writable)");
            }
            return;
        }
        creatable(option, dir, dir);
    }

    /** Throws a {@link UsageException} (exit 2) naming {@code option} when {@code file} cannot be written. */
    public static void checkFile(String option, Path file) {
        if (Files.isDirectory(file)) {
            throw new UsageException(option + " " + file + ": Is a directory (give a file name)");
        }
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS) || Files.exists(file)) {
            if (!Files.isWritable(file)) {
                throw new UsageException(option + " " + file + ": Permission denied");
            }
            return;
        }
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            creatable(option, file, parent);
        }
    }

    /** {@code dir}, the directory {@code path} needs, exists and is writable, or can be made. */
    private static void creatable(String option, Path path, Path dir) {
        Path abs = dir.toAbsolutePath().normalize();
        Path existing = abs;
        Path firstMissing = null;
        while (existing != null && !Files.exists(existing)) {
            firstMissing = existing;
            existing = existing.getParent();
        }
        if (existing == null) {
            return;    // not even the root exists: the write will say why
        }
        if (!Files.isDirectory(existing)) {
            throw new UsageException(option + " " + path + ": " + existing + ": Not a directory (it is a file)");
        }
        if (firstMissing == null) {
            if (!Files.isWritable(existing)) {
                throw new UsageException(option + " " + path + ": " + existing + ": Permission denied");
            }
            return;
        }
        if (existing.getParent() == null) {
            throw new UsageException(option + " " + path + ": " + firstMissing + ": No such file or directory; usnet does"
                    + " not make directories at the filesystem root (mkdir it first if it is meant)");
        }
        if (!Files.isWritable(existing)) {
            throw new UsageException(option + " " + path + ": cannot make " + firstMissing + ": Permission denied");
        }
    }
}
