package dev.usnet.core.nftables;

/**
 * A ruleset text nft would refuse, or that uses nft syntax usnet does not model: where (line and column, from 1)
 * and what was expected. Nothing of the text it came from has been applied.
 */
public final class NftSyntaxException extends IllegalArgumentException {
    private final int line;
    private final int column;
    private final String detail;

    public NftSyntaxException(int line, int column, String detail) {
        super("line " + line + ", column " + column + ": " + detail);
        this.line = line;
        this.column = column;
        this.detail = detail;
    }

    public int line() {
        return line;
    }

    public int column() {
        return column;
    }

    /** The message without its position. */
    public String detail() {
        return detail;
    }
}
