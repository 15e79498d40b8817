package dev.usnet.tools.run;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * SIGUSR1 for "write the histograms now", through sun.misc.Signal (the JDK's only signal API), reached
 * reflectively so the build stays free of internal-API warnings.
 */
public final class Signals {
    private Signals() {}

    /** Installs {@code action} for SIGUSR1; returns what to pass to {@link #restoreUsr1}, null when unsupported. */
    public static Object onUsr1(Runnable action) {
        try {
            Class<?> handlerType = Class.forName("sun.misc.SignalHandler");
            Object handler = Proxy.newProxyInstance(Signals.class.getClassLoader(), new Class<?>[] {handlerType},
                    (proxy, m, args) -> switch (m.getName()) {
                        case "handle" -> {
                            try {
                                action.run();
                            } catch (RuntimeException e) {
                                System.err.println("usnet: SIGUSR1: " + e.getMessage());
                            }
                            yield null;
                        }
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        case "toString" -> "usnet SIGUSR1 handler";
                        default -> null;
                    });
            return handle(handler);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    public static void restoreUsr1(Object previous) {
        if (previous != null) {
            try {
                handle(previous);
            } catch (ReflectiveOperationException | RuntimeException ignored) {
                // Nothing to restore on this platform.
            }
        }
    }

    private static Object handle(Object handler) throws ReflectiveOperationException {
        Class<?> signalType = Class.forName("sun.misc.Signal");
        Class<?> handlerType = Class.forName("sun.misc.SignalHandler");
        Object usr1 = signalType.getConstructor(String.class).newInstance("USR1");
        Method m = signalType.getMethod("handle", signalType, handlerType);
        try {
            return m.invoke(null, usr1, handler);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }
}
