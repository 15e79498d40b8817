package dev.usnet.tools.packetdrill.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Script fds are numbered as Linux numbers a fresh process's: from 3, lowest free first. */
class FdTableTest {

    @Test
    void numbersFromThreeAndReusesTheLowestFree() {
        FdTable t = new FdTable();
        assertEquals(3, t.add(117));
        assertEquals(4, t.add(240));
        assertEquals(5, t.add(241));
        assertEquals(240, t.kernelFd(4));
        assertEquals(4, t.scriptFd(240));
        t.remove(4);
        assertEquals(FdTable.NO_FD, t.kernelFd(4));
        assertEquals(4, t.add(300), "the lowest free number comes back first");
        assertEquals(6, t.add(301));
        assertEquals(FdTable.NO_FD, t.kernelFd(0), "stdin is not the script's socket");
        assertEquals(FdTable.NO_FD, t.kernelFd(-1));
        assertEquals(List.of(117, 300, 241, 301), t.drain());
        assertEquals(FdTable.NO_FD, t.kernelFd(3));
    }
}
