package dev.usnet.core.nftables;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.netfilter.NfConntrack;
import dev.usnet.core.netfilter.NfConntrackModule;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfHookOps;
import dev.usnet.core.netfilter.NfNatModule;
import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.netfilter.NfVerdict;
import java.util.ArrayList;
import java.util.List;

/** Stand-ins for connection tracking and NAT that record what the ruleset asks of them. */
final class NftFakes {
    private NftFakes() {}

    static final class Conntrack implements NfConntrackModule {
        int users;

        @Override
        public void get() {
            users++;
        }

        @Override
        public void put() {
            users--;
        }
    }

    static class Nat implements NfNatModule {
        final List<String> calls = new ArrayList<>();
        final List<NfHookOps> chains = new ArrayList<>();
        int verdict = NfVerdict.ACCEPT;

        @Override
        public void registerChain(NfHook hook, int priority, NfHookOps chain) {
            calls.add("register " + hook.nftName() + " " + priority);
            chains.add(chain);
        }

        @Override
        public void unregisterChain(NfHook hook, NfHookOps chain) {
            calls.add("unregister " + hook.nftName());
            chains.remove(chain);
        }

        @Override
        public int setup(Packet p, NfNatRange range, boolean source) {
            calls.add((source ? "snat " : "dnat ") + range);
            return verdict;
        }

        @Override
        public int masquerade(Packet p, NfNatRange range, Device out) {
            calls.add("masquerade " + range + " out=" + (out == null ? "-" : out.name()));
            return verdict;
        }
    }

    /** An entry with a status and a mark, as a rule sees one. */
    static final class Entry implements NfConntrack {
        int status;
        int mark;

        @Override
        public int status() {
            return status;
        }

        @Override
        public int mark() {
            return mark;
        }

        @Override
        public void setMark(int mark) {
            this.mark = mark;
        }

        @Override
        public int protocol() {
            return 6;
        }
    }
}
