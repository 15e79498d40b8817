package dev.usnet.tap.rtnl;

/** The rtnetlink message types usnet sends and reads (RTM_* of linux/rtnetlink.h), and their names for messages. */
public final class Rtm {
    public static final int NEWLINK = 16;
    public static final int GETLINK = 18;
    public static final int NEWADDR = 20;
    public static final int GETADDR = 22;
    public static final int NEWNSID = 88;
    public static final int GETNSID = 90;

    private Rtm() {}

    /** "RTM_GETADDR", ... or "RTM type N". */
    public static String name(int type) {
        return switch (type) {
            case NEWLINK -> "RTM_NEWLINK";
            case GETLINK -> "RTM_GETLINK";
            case NEWADDR -> "RTM_NEWADDR";
            case GETADDR -> "RTM_GETADDR";
            case NEWNSID -> "RTM_NEWNSID";
            case GETNSID -> "RTM_GETNSID";
            default -> "RTM type " + type;
        };
    }
}
