package dev.usnet.tap.sys;

/**
 * Linux errno values usnet's platform code meets, their symbolic names, and the messages users see when a step
 * fails (creating a TAP device, entering a network namespace, an rtnetlink request). Messages say what went wrong
 * and what to do about it.
 */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int ENXIO = 6;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int ENFILE = 23;
    public static final int EMFILE = 24;
    public static final int ENOTTY = 25;
    public static final int ENOSPC = 28;
    public static final int EMSGSIZE = 90;
    public static final int EOPNOTSUPP = 95;
    public static final int EBADFD = 77;
    public static final int ENETDOWN = 100;
    public static final int ENOBUFS = 105;

    private Errno() {}

    /** "EPERM", "EBADFD", ... or "errno N" for values not listed here. */
    public static String name(int errno) {
        return switch (errno) {
            case EPERM -> "EPERM";
            case ENOENT -> "ENOENT";
            case EINTR -> "EINTR";
            case EIO -> "EIO";
            case ENXIO -> "ENXIO";
            case EBADF -> "EBADF";
            case EAGAIN -> "EAGAIN";
            case ENOMEM -> "ENOMEM";
            case EACCES -> "EACCES";
            case EFAULT -> "EFAULT";
            case EBUSY -> "EBUSY";
            case EEXIST -> "EEXIST";
            case ENODEV -> "ENODEV";
            case EINVAL -> "EINVAL";
            case ENFILE -> "ENFILE";
            case EMFILE -> "EMFILE";
            case ENOTTY -> "ENOTTY";
            case ENOSPC -> "ENOSPC";
            case EMSGSIZE -> "EMSGSIZE";
            case EOPNOTSUPP -> "EOPNOTSUPP";
            case EBADFD -> "EBADFD";
            case ENETDOWN -> "ENETDOWN";
            case ENOBUFS -> "ENOBUFS";
            default -> "errno " + errno;
        };
    }

    /**
     * The message for a failed step of creating a TAP device. {@code op} is the step ("open /dev/net/tun",
     * "TUNSETIFF", "TUNSETOFFLOAD", "setns", "unshare", "move"), {@code subject} the device or namespace name.
     */
    public static String message(String op, String subject, int errno) {
        String head = op + " failed: " + name(errno) + " — ";
        boolean denied = errno == EPERM || errno == EACCES;
        return switch (op) {
            case "TUNSETIFF" -> switch (errno) {
                case EPERM, EACCES -> head + "creating a TAP device needs CAP_NET_ADMIN (run as root or grant the"
                        + " capability: setcap cap_net_admin+ep on the java binary)";
                // TUNSETIFF is always asked with IFF_TUN_EXCL, so EBUSY means: some link has this name already.
                case EBUSY -> head + "a device named " + subject + " already exists (not created by usnet; choose"
                        + " another name, or a pattern such as tap%d)";
                case EEXIST -> head + "a device named " + subject + " already exists and is not a TAP device";
                case EINVAL -> head + "the kernel rejected the name '" + subject + "' or the flags";
                default -> head + "could not create TAP device " + subject;
            };
            case "open /dev/net/tun" -> switch (errno) {
                case ENOENT -> head + "/dev/net/tun does not exist: load the tun module (modprobe tun) or create the"
                        + " node (mkdir -p /dev/net && mknod /dev/net/tun c 10 200)";
                case ENODEV, ENXIO -> head + "the kernel has no tun driver (modprobe tun)";
                case EPERM, EACCES -> head + "no permission to open /dev/net/tun (run as root; creating a TAP device"
                        + " also needs CAP_NET_ADMIN)";
                default -> head + "cannot open /dev/net/tun";
            };
            case "open netns" -> switch (errno) {
                case ENOENT -> head + "network namespace " + subject + " does not exist (no /var/run/netns/" + subject
                        + "; create it with: ip netns add " + subject + ")";
                default -> head + "cannot open /var/run/netns/" + subject;
            };
            case "setns" -> denied
                    ? head + "entering network namespace " + subject + " needs CAP_SYS_ADMIN (run as root)"
                    : head + "cannot enter network namespace " + subject;
            case "unshare" -> denied
                    ? head + "creating a private birth namespace needs CAP_SYS_ADMIN (run as root, or use birth IN_NETNS)"
                    : head + "cannot create a private birth namespace";
            case "move" -> switch (errno) {
                case EEXIST -> head + "network namespace " + subject + " already has a device with this name";
                case EPERM, EACCES -> head + "moving a device between namespaces needs CAP_NET_ADMIN";
                default -> head + "cannot move the device into network namespace " + subject;
            };
            case "RTM_GETADDR" -> switch (errno) {
                case EINVAL -> head + "the kernel refused the address dump of " + subject + " (a namespace is asked for"
                        + " by nsid only when the asker's namespace has given it one: ip netns set NAME auto; and"
                        + " IFA_TARGET_NETNSID needs Linux 4.20 or later)";
                case EPERM, EACCES -> head + "reading another namespace's addresses needs CAP_NET_ADMIN in it (run as root)";
                default -> head + "cannot dump the addresses of " + subject;
            };
            case "RTM_NEWNSID" -> denied
                    ? head + "assigning an nsid needs CAP_NET_ADMIN (run as root)"
                    : head + "cannot give network namespace " + subject + " an nsid";
            case "RTM_NEWADDR", "RTM_NEWLINK" -> denied
                    ? head + "changing links and addresses needs CAP_NET_ADMIN (run as root)"
                    : head + op + " for " + subject;
            case "TUNSETOFFLOAD" -> errno == EINVAL
                    ? head + "this kernel does not support the requested offloads (TSO needs TUN_F_CSUM too)"
                    : head + "cannot set offloads on " + subject;
            default -> head + op + " on " + subject;
        };
    }
}
