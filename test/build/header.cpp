// The public header compiles as C++ and its macro works in C++ code.
#include <lbomp.h>

static void f(lbomp_t *lb)
{
        LBOMP_FOR_EACH_TASK(lb, int *, x) {
                (*x)++;
        }
}

int main()
{
        lbomp_t *lb = nullptr;
        if (lbomp_create(&lb) == 0) {
                f(lb);
                lbomp_destroy(lb);
        }
        return 0;
}
