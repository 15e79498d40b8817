package dev.usnet.core.ipv4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.route.Fib4;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The address table answers from lookups made after its last change, whichever of add, remove and flush it was,
 * on both sides of the size where it switches from scanning to hash maps: checked against a plain list.
 */
class DevinetTest {

    @ParameterizedTest
    @ValueSource(ints = {3, 40})
    void lookupsFollowEveryChange(int devices) {
        Random rnd = new Random(devices);
        List<Device> devs = new ArrayList<>();
        for (int i = 0; i < devices; i++) {
            devs.add(new Loopback());
        }
        Fib4 routes = new Fib4();
        Devinet in = new Devinet(routes);
        List<IfAddr> model = new ArrayList<>();
        for (int step = 0; step < 4000; step++) {
            Device d = devs.get(rnd.nextInt(devices));
            int a = 0xc612_0000 | (rnd.nextInt(devices * 2) << 2) | 1;
            int op = rnd.nextInt(10);
            if (op < 6) {
                boolean present = model.stream().anyMatch(x -> x.dev() == d && x.address() == a);
                try {
                    IfAddr added = in.add(d, a, 30);
                    assertFalse(present, "a second add of one address on one device is refused");
                    model.add(added);
                } catch (IllegalArgumentException e) {
                    assertTrue(present, e.getMessage());
                }
            } else if (op < 9) {
                boolean present = model.removeIf(x -> x.dev() == d && x.address() == a);
                assertEquals(present, in.remove(d, a));
            } else {
                model.removeIf(x -> x.dev() == d);
                in.flush(d);
            }
            int probe = model.isEmpty() || rnd.nextBoolean() ? a : model.get(rnd.nextInt(model.size())).address();
            IfAddr expected = model.stream().filter(x -> x.address() == probe).findFirst().orElse(null);
            if (expected == null) {
                assertNull(in.local(probe));
            } else {
                assertSame(expected, in.local(probe), "the first added of that address wins");
            }
            boolean brd = model.stream().anyMatch(x -> x.broadcast() == (probe | 2));
            assertEquals(brd, in.isBroadcast(probe | 2));
            assertEquals(model.stream().anyMatch(x -> x.dev() == d && x.broadcast() == (probe | 2)), in.isBroadcastOn(d, probe | 2));
        }
        assertEquals(model, in.list());
        for (Device d : devs) {
            assertEquals(model.stream().filter(x -> x.dev() == d).toList(), in.list(d));
        }
    }
}
