package dev.usnet.core.netns;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PacketTypesTest {
    @Test
    void findsTheHandlerOfEachRegisteredTypeAndNoneForOthers() {
        PacketTypes t = new PacketTypes();
        PacketHandler ip = p -> {};
        PacketHandler arp = p -> {};
        t.register(0x0800, ip);
        t.register(0x0806, arp);
        assertSame(ip, t.find(0x0800));
        assertSame(arp, t.find(0x0806));
        assertNull(t.find(0x86dd));
        assertNull(t.find(0x0000));
    }

    @Test
    void growsAndKeepsEveryEntryWhenTypesCollide() {
        PacketTypes t = new PacketTypes();
        Map<Integer, PacketHandler> want = new HashMap<>();
        // Types that share low bits, more of them than the initial table holds.
        for (int i = 0; i < 40; i++) {
            int type = 0x0800 + i * 0x100;
            PacketHandler h = p -> {};
            want.put(type, h);
            t.register(type, h);
        }
        want.forEach((type, h) -> assertSame(h, t.find(type), "ethertype " + Integer.toHexString(type)));
        assertEquals(40, t.ethertypes().size());
    }

    @Test
    void unregisterRemovesOnlyThatType() {
        PacketTypes t = new PacketTypes();
        List<PacketHandler> hs = new ArrayList<>();
        for (int type : new int[] {0x0800, 0x0808, 0x0810}) {
            PacketHandler h = p -> {};
            hs.add(h);
            t.register(type, h);
        }
        t.unregister(0x0808);
        assertNull(t.find(0x0808));
        assertSame(hs.get(0), t.find(0x0800));
        assertSame(hs.get(2), t.find(0x0810));
    }

    @Test
    void refusesASecondHandlerAndTypesThatAreNotEthernetII() {
        PacketTypes t = new PacketTypes();
        t.register(0x0800, p -> {});
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> t.register(0x0800, p -> {}));
        assertTrue(twice.getMessage().contains("0x800"), twice.getMessage());
        IllegalArgumentException length = assertThrows(IllegalArgumentException.class, () -> t.register(0x05dc, p -> {}));
        assertTrue(length.getMessage().contains("0x5dc"), length.getMessage());
        assertThrows(IllegalStateException.class, () -> t.unregister(0x0806));
    }
}
